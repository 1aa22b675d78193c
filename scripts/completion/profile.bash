# SPDX-License-Identifier: GPL-2.0
# bash completion for profile(8) and offcputime(8); `make install` puts it in
# $(PREFIX)/share/bash-completion/completions/ as `profile`, with
# `offcputime` a link to it. Works without the bash-completion package too:
# `source profile.bash`.
#
# The options are not listed here: they are read from the binary's own
# --help, which its option table prints, so a new option completes as soon
# as it exists. An option's argument is completed from its metavar in that
# help: "auto|bpf|perf" gives those words, PID running processes, TID
# running threads, FILE/BASE/NEW/MAP_PATH files, PATH directories; numbers
# get nothing.

# "NAME METAVAR" lines of the options of binary $1, cached per binary.
declare -gA _profile_help_cache 2>/dev/null

_profile_options()
{
	local cmd=$1 help line inv part out=""

	if [[ -n ${_profile_help_cache[$cmd]+set} ]]; then
		printf '%s' "${_profile_help_cache[$cmd]}"
		return
	fi
	help=$(LC_ALL=C "$cmd" --help 2>/dev/null) || return
	# "  -p PID, --pid PID     help...": the invocation ends at two spaces.
	while IFS= read -r line; do
		[[ $line == '  -'* ]] || continue
		inv=${line#  }
		inv=${inv%%  *}
		while [[ -n $inv ]]; do
			part=${inv%%, *}
			if [[ $part == "$inv" ]]; then inv=""; else inv=${inv#*, }; fi
			if [[ $part == *' '* ]]; then
				out+="${part%% *} ${part#* }"$'\n'
			else
				out+="$part"$'\n'
			fi
		done
	done <<<"$help"
	_profile_help_cache[$cmd]=$out
	printf '%s' "$out"
}

# The metavar of option $2 in the options $1 ("" for a flag or an unknown one).
_profile_metavar()
{
	local line

	while IFS= read -r line; do
		if [[ ${line%% *} == "$2" && $line == *' '* ]]; then
			printf '%s' "${line#* }"
			return
		fi
	done <<<"$1"
}

# Running processes (or threads, with $1 = tid) for the last item of a comma list.
_profile_ids()
{
	local cur=$2 head="" d ids=()

	if [[ $cur == *,* ]]; then
		head=${cur%,*},
		cur=${cur##*,}
	fi
	if [[ $1 == tid ]]; then
		for d in /proc/[0-9]*/task/[0-9]*; do ids+=("${d##*/}"); done
	else
		for d in /proc/[0-9]*; do ids+=("${d##*/}"); done
	fi
	COMPREPLY=($(compgen -P "$head" -W "${ids[*]}" -- "$cur"))
}

# Complete the argument of an option whose metavar is $1.
_profile_value()
{
	local metavar=$1 cur=$2

	case $metavar in
	*'|'*)
		COMPREPLY=($(compgen -W "${metavar//|/ }" -- "$cur"))
		;;
	PID)
		_profile_ids pid "$cur"
		;;
	TID)
		_profile_ids tid "$cur"
		;;
	FILE | BASE* | NEW | MAP_PATH)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	PATH)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "${cur:-/sys/fs/cgroup/}"))
		;;
	esac
}

_profile()
{
	local cmd=${COMP_WORDS[0]} cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]}
	local opts opt metavar i k w

	COMPREPLY=()
	[[ $cmd == '~/'* ]] && cmd=$HOME/${cmd#'~/'}
	# After "--" comes the command to run, completed as such.
	for ((i = 1; i < cword; i++)); do
		[[ ${COMP_WORDS[i]} == -- ]] || continue
		if declare -F _command_offset >/dev/null; then
			_command_offset $((i + 1))
		elif ((cword == i + 1)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return 0
	done
	opts=$(_profile_options "$cmd")

	# "--opt=value": bash splits the word at "=".
	if [[ $cur == = ]]; then
		_profile_value "$(_profile_metavar "$opts" "${COMP_WORDS[cword - 1]}")" ""
		return 0
	fi
	if ((cword >= 2)) && [[ ${COMP_WORDS[cword - 1]} == = ]]; then
		_profile_value "$(_profile_metavar "$opts" "${COMP_WORDS[cword - 2]}")" "$cur"
		return 0
	fi

	# The k-th argument of an option one to two words back ("--diff BASE NEW").
	for ((k = 1; k <= 2 && k < cword; k++)); do
		w=${COMP_WORDS[cword - k]}
		[[ $w == -* ]] || continue
		metavar=$(_profile_metavar "$opts" "$w")
		read -ra opt <<<"$metavar"
		if ((${#opt[@]} >= k)); then
			_profile_value "${opt[k - 1]}" "$cur"
			return 0
		fi
		break
	done

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(while IFS= read -r opt; do
			printf '%s\n' "${opt%% *}"
		done <<<"$opts")" -- "$cur"))
	fi
	return 0
}

complete -F _profile profile offcputime
