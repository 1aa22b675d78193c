// SPDX-License-Identifier: GPL-2.0
// A C++ workload: its hot frame is a member of a class template in a
// namespace, so a profiler must demangle it: ns::Class<long>::method.
// Usage: cxx [seconds]
#include <chrono>
#include <cstdlib>

namespace ns {
template <typename T> struct Class {
	volatile T acc = 0;
	__attribute__((noinline)) void method()
	{
		for (T i = 0; i < 100000; i++)
			acc = acc * 31 + i;
	}
};
} // namespace ns

int main(int argc, char **argv)
{
	auto seconds = std::chrono::duration<double>(argc > 1 ? std::atof(argv[1]) : 2.0);
	auto end = std::chrono::steady_clock::now() + seconds;
	ns::Class<long> c;

	while (std::chrono::steady_clock::now() < end)
		c.method();
	return 0;
}
