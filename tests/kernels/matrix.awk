# SPDX-License-Identifier: GPL-2.0
# Renders the kernel matrix (markdown) from tests/kernels/expected and the
# result lines of each kernel (KERNEL|ROW|STATUS|DETAIL|MEASURED, run.sh):
# one table, cells referring to numbered reasons (equal reasons share one).
# Exit 1 when a cell is WRONG and not an expected failure, or a kernel did
# not finish. Variables: total_secs, accel, accel_why (why that one), jobs
# (guests at once); measured_file, when set, gets
# every cell's measurements.

function esc(s) { gsub(/\|/, "/", s); gsub(/`/, "'", s); return s }

# The note number of a reason; equal reasons share one.
function note(text) {
	if (!(text in noteno)) {
		noteno[text] = ++nnotes
		notes[nnotes] = text
	}
	return noteno[text]
}

FNR == 1 { file++ }

# expected: KERNEL_REGEX|ROW|WHY (issue reference), # comments
file == 1 {
	if ($0 ~ /^#/ || NF < 3)
		next
	nexp++
	exp_k[nexp] = $1; exp_row[nexp] = $2; exp_why[nexp] = $3
	next
}

{
	k = $1; row = $2; status = $3; detail = $4; measured = $5
	sub(/ +$/, "", detail)
	sub(/ +$/, "", measured)
	if (!(k in seen_k)) { seen_k[k] = 1; kernels[++nk] = k }
	if (row == "kernel") { info[k] = detail; next }
	if (row == "done") { done[k] = 1; next }
	if (row == "boot") { boot[k] = detail; next }
	if (row == "auto-decision") {
		auto_s[k] = status; auto_b[k] = detail; auto_go[k] = measured
		next
	}
	if (row == "start" || row == "tick") { next }
	# A row that a crash interrupted may have no other line; a line wins.
	if (status == "crash" && (k, row) in st) { next }
	if (!(row in seen_row)) { seen_row[row] = 1; rows[++nr] = row }
	st[k, row] = status
	det[k, row] = detail
	meas[k, row] = measured
}

END {
	bad = 0
	printf "| capability |"
	for (i = 1; i <= nk; i++)
		printf " %s |", kernels[i]
	printf "\n|---|"
	for (i = 1; i <= nk; i++)
		printf "---|"
	printf "\n"
	for (r = 1; r <= nr; r++) {
		row = rows[r]
		name = row
		sub(/\/bpf$/, " (bpf)", name); sub(/\/perf$/, " (perf)", name)
		printf "| `%s` |", esc(name)
		for (i = 1; i <= nk; i++) {
			k = kernels[i]
			if (!((k, row) in st)) {
				printf " %s |", (k in done) ? "not run" : "**no result**"
				continue
			}
			s = st[k, row]; d = det[k, row]
			if (s == "works") {
				cell = d == "" ? "works" : "works [" note(d) "]"
			} else if (s == "other") {
				b = meas[k, row]; sub(/,.*/, "", b)
				cell = "other: " b " [" note(d) "]"
			} else if (s == "WRONG") {
				why = ""
				for (e = 1; e <= nexp; e++)
					if (k ~ exp_k[e] && row == exp_row[e])
						why = exp_why[e]
				if (why != "") {
					cell = "WRONG, expected [" note(d "; expected: " why) "]"
				} else {
					cell = "**WRONG** [" note(d) "]"
					bad = 1
					failed[++nfailed] = k " | " name " | WRONG: " d
				}
			} else if (s == "crash") {
				cell = "**crash** [" note(d) "]"
			} else {
				cell = s " [" note(d) "]"
			}
			if (measured_file != "")
				printf "- %s `%s`: %s: %s\n", k, name, s, \
					meas[k, row] (d != "" ? "; " d : "") > measured_file
			printf " %s |", esc(cell)
		}
		printf "\n"
	}
	printf "\n"
	for (i = 1; i <= nk; i++) {
		k = kernels[i]
		if (!(k in done)) {
			bad = 1
			failed[++nfailed] = k " | did not finish (its boot: " boot[k] ")"
		}
		i_k = info[k]
		sub("^" k " ", "", i_k)
		printf "- %s: %s; auto chose %s after %s s%s; run %s%s\n", k, i_k, \
			(auto_b[k] != "" ? auto_b[k] : "?"), \
			(auto_s[k] != "" ? sprintf("%.2f", auto_s[k]) : "?"), \
			(auto_go[k] ~ /^[0-9.]+$/ ? sprintf(", sampling from %.2f s", auto_go[k]) : ""), \
			boot[k], (k in done) ? "" : " **(did not finish)**"
	}
	how = toupper(accel)
	detail = sub(/,THREAD=SINGLE/, "", how) ? "one host thread" : ""
	if (accel_why != "")
		detail = detail (detail != "" ? "; " : "") accel_why
	printf "- qemu %s%s%s, %d s in all\n\n", how, (detail != "" ? " (" detail ")" : ""), \
		(jobs > 1 ? sprintf(", %d guests at once", jobs) : ""), total_secs
	for (n = 1; n <= nnotes; n++)
		printf "%d. %s\n", n, esc(notes[n])
	# Last, where the tail of a CI log shows them: what failed the matrix.
	for (n = 1; n <= nfailed; n++)
		printf "%scheck-kernels: failed: %s\n", (n == 1 ? "\n" : ""), failed[n]
	exit bad
}
