package events

// Plain8 is plain8 on the eight bytes of s, for the external tests.
func Plain8(s string) bool {
	var x uint64
	for i := range 8 {
		x |= uint64(s[i]) << (8 * i)
	}
	return plain8(x)
}
