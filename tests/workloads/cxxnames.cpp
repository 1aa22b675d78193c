// SPDX-License-Identifier: GPL-2.0
// C++ names a profiler must shorten as perf does: template functions with
// return types (also function-pointer and decltype ones), operators
// (comparison, call, conversion, new), lambdas, function-pointer template
// arguments, ABI tags, anonymous namespaces, thunks. Each is a real,
// called function, so its symbol is in the binary. Usage: cxxnames [seconds]
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#define HOT __attribute__((noinline))

static volatile long sink;

namespace ns {

template <typename T> HOT T twice(T x)
{
	return x * 2;
}

template <typename T> struct Box {
	T value;

	HOT T get() const
	{
		return value;
	}
	HOT operator T() const
	{
		return value + 1;
	}
	template <typename U> HOT U map(U u) const
	{
		return u + static_cast<U>(value);
	}
	HOT void set(T v) &
	{
		value = v;
	}
};

template <typename T> HOT bool operator<(const Box<T> &a, const Box<T> &b)
{
	return a.value < b.value;
}

struct Adder {
	long base;

	HOT long operator()(long x) const
	{
		return base + x;
	}
};

HOT void tick(int x)
{
	sink = sink + x;
}

template <typename F> HOT void apply(F f, int x)
{
	f(x);
}

template <typename T> HOT int take(T)
{
	return 7;
}

// Returns a function pointer: the name sits inside the declarator.
template <typename T> HOT int (*pick())(T)
{
	return take<T>;
}

template <typename A, typename B> HOT auto add(A a, B b) -> decltype(a + b)
{
	return a + b;
}

HOT long sum()
{
	return 0;
}

template <typename T, typename... R> HOT long sum(T first, R... rest)
{
	return first + sum(rest...);
}

template <typename T> HOT std::string label(T)
{
	return std::string(40, 'x');
}

struct Pool {
	long pad;

	HOT static void *operator new(std::size_t n)
	{
		return std::malloc(n);
	}
	HOT static void operator delete(void *p)
	{
		std::free(p);
	}
};

struct Base1 {
	virtual ~Base1() = default;
	long a = 1;
};

struct Base2 {
	virtual ~Base2() = default;
	HOT virtual long value() const
	{
		return 2;
	}
};

struct Derived : Base1, Base2 {
	HOT long value() const override
	{
		return 3;
	}
};

HOT long run_lambdas(long n)
{
	auto square = [](long x) HOT { return x * x; };
	auto generic = [](auto x) HOT { return x + 1; };

	return square(n) + generic(n) + generic(static_cast<int>(n));
}

} // namespace ns

namespace {
HOT long hidden(long x)
{
	return x ^ 0x5a;
}
} // namespace

HOT static void one_round(long i)
{
	ns::Box<long> a{i}, b{i + 1};
	std::vector<int> v;
	ns::Base2 *d = new ns::Derived;

	sink = ns::twice(i) + ns::twice(static_cast<int>(i)) + a.get() + static_cast<long>(a) +
	       a.map<int>(3) + (a < b) + ns::Adder{i}(2) + ns::pick<int>()(1) + ns::add(i, 2.0) +
	       ns::sum(1, 2L, static_cast<short>(3)) + ns::label(i).size() + ns::run_lambdas(i) +
	       hidden(i) + d->value();
	a.set(i);
	ns::apply(ns::tick, 1);
	ns::apply<void (*)(int)>(&ns::tick, 2);
	delete new ns::Pool;
	delete d;
	v.push_back(static_cast<int>(i));
	sink = sink + v.size();
}

int main(int argc, char **argv)
{
	auto seconds = std::chrono::duration<double>(argc > 1 ? std::atof(argv[1]) : 0.0);
	auto end = std::chrono::steady_clock::now() + seconds;
	long i = 0;

	do
		one_round(i++);
	while (std::chrono::steady_clock::now() < end);
	return 0;
}
