package tds

// TypeSet is a set of packet types with values 0 to 31 (every type the
// specification defines). The zero TypeSet is empty; a ReaderConfig treats
// an empty Allowed set as "every type".
type TypeSet uint32

// Types returns the set of the given types. Types with a value above 31
// cannot be members and are left out.
func Types(ts ...PacketType) TypeSet {
	var s TypeSet
	for _, t := range ts {
		if t < 32 {
			s |= 1 << t
		}
	}
	return s
}

// Has reports whether t is in s.
func (s TypeSet) Has(t PacketType) bool {
	return t < 32 && s&(1<<t) != 0
}
