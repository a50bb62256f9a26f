// SPDX-License-Identifier: GPL-3.0-or-later
// A std::vector whose sizing constructor and resize leave elements default-initialised (trivial
// ones: not written), for large arrays that a parallel loop then fills entirely: their pages are
// first touched, and faulted in, by the threads that fill them instead of being zeroed by one
// thread first.
#pragma once
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace fm {

template <class T, class Base = std::allocator<T>>
struct DefaultInitAllocator : Base {
    using Base::Base;
    DefaultInitAllocator() = default;
    template <class U>
    struct rebind {
        using other = DefaultInitAllocator<U, typename std::allocator_traits<Base>::template rebind_alloc<U>>;
    };
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        std::allocator_traits<Base>::construct(static_cast<Base&>(*this), p, std::forward<Args>(args)...);
    }
};

template <class T>
using UninitVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace fm
