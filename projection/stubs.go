package projection

import "math/bits"

// stubs is the set of a run's steps still in their checkpoint form: step n
// is bit n-1. A run loaded from the checkpoint keeps every step but the last
// as a stub {N, Final: true} and reads one from bbolt when someone asks for
// it, so loading a run of ten thousand steps copies none of them.
type stubs []uint64

// add marks step n as a stub.
func (s *stubs) add(n int) {
	i := (n - 1) / 64
	for len(*s) <= i {
		*s = append(*s, 0)
	}
	(*s)[i] |= 1 << ((n - 1) % 64)
}

// has reports whether step n is a stub.
func (s stubs) has(n int) bool {
	i := (n - 1) / 64
	return n > 0 && i < len(s) && s[i]&(1<<((n-1)%64)) != 0
}

// remove marks step n as decoded.
func (s stubs) remove(n int) {
	if s.has(n) {
		s[(n-1)/64] &^= 1 << ((n - 1) % 64)
	}
}

// empty reports whether no step is a stub.
func (s stubs) empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// list returns the stub steps in order.
func (s stubs) list() []int {
	var ns []int
	for i, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			ns = append(ns, i*64+b+1)
			w &^= 1 << b
		}
	}
	return ns
}
