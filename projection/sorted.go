package projection

import (
	"slices"
	"sort"
)

// chunkMax is the most ids one chunk of a sortedSet holds.
const chunkMax = 256

// sortedSet is a set of strings kept in order: a list of sorted chunks of at
// most chunkMax ids, each chunk's ids below the next chunk's. Insert and
// remove cost O(log n + chunkMax + n/chunkMax), walking from a bound costs
// O(log n) to find it and O(1) per id after: a page of a hundred thousand
// pending tickets is read without touching the others.
type sortedSet struct {
	chunks [][]string
	n      int
}

// len returns the number of ids.
func (s *sortedSet) len() int { return s.n }

// chunkOf returns the chunk that holds id or would: the first whose last id
// is not below id, or the last chunk.
func (s *sortedSet) chunkOf(id string) int {
	i := sort.Search(len(s.chunks), func(i int) bool { c := s.chunks[i]; return c[len(c)-1] >= id })
	return min(i, len(s.chunks)-1)
}

// insert adds id; false when it was there.
func (s *sortedSet) insert(id string) bool {
	if len(s.chunks) == 0 {
		s.chunks = [][]string{{id}}
		s.n = 1
		return true
	}
	if last := s.chunks[len(s.chunks)-1]; last[len(last)-1] < id {
		// Above every id: ids mostly come in order (ULIDs, a checkpoint's
		// keys), so appending is the common case, and a full last chunk
		// starts a new one rather than splitting.
		if len(last) < chunkMax {
			s.chunks[len(s.chunks)-1] = append(last, id)
		} else {
			s.chunks = append(s.chunks, append(make([]string, 0, 8), id))
		}
		s.n++
		return true
	}
	ci := s.chunkOf(id)
	c := s.chunks[ci]
	pos, found := slices.BinarySearch(c, id)
	if found {
		return false
	}
	c = slices.Insert(c, pos, id)
	s.n++
	if len(c) <= chunkMax {
		s.chunks[ci] = c
		return true
	}
	// Split in two; ids mostly come in order, so the lower half is full for good.
	half := len(c) / 2
	lo, hi := slices.Clip(c[:half]), slices.Clone(c[half:])
	s.chunks[ci] = lo
	s.chunks = slices.Insert(s.chunks, ci+1, hi)
	return true
}

// remove deletes id; false when it was not there.
func (s *sortedSet) remove(id string) bool {
	if len(s.chunks) == 0 {
		return false
	}
	ci := s.chunkOf(id)
	c := s.chunks[ci]
	pos, found := slices.BinarySearch(c, id)
	if !found {
		return false
	}
	c = slices.Delete(c, pos, pos+1)
	s.n--
	if len(c) == 0 {
		s.chunks = slices.Delete(s.chunks, ci, ci+1)
	} else {
		s.chunks[ci] = c
	}
	return true
}

// first returns the smallest id ("" when empty).
func (s *sortedSet) first() string {
	if len(s.chunks) == 0 {
		return ""
	}
	return s.chunks[0][0]
}

// ascend calls fn with every id above after ("" for every id), in order,
// until fn returns false.
func (s *sortedSet) ascend(after string, fn func(id string) bool) {
	if len(s.chunks) == 0 {
		return
	}
	ci := s.chunkOf(after)
	pos, found := slices.BinarySearch(s.chunks[ci], after)
	if found {
		pos++
	}
	for ; ci < len(s.chunks); ci, pos = ci+1, 0 {
		for _, id := range s.chunks[ci][pos:] {
			if !fn(id) {
				return
			}
		}
	}
}

// has reports whether id is in the set.
func (s *sortedSet) has(id string) bool {
	if len(s.chunks) == 0 {
		return false
	}
	_, found := slices.BinarySearch(s.chunks[s.chunkOf(id)], id)
	return found
}
