package builtin

import (
	"encoding/binary"
	"strings"
	"unicode/utf16"
)

// Byte-order marks. A file that holds only one is empty to edit (an empty
// oldString fills it), and is filled in the encoding the mark names, the
// mark kept: UTF-8, UTF-16 or UTF-32, little- or big-endian. (edit matches
// oldString in UTF-8 text only: a UTF-16 or UTF-32 file with content is
// not found to hold it.)

const utf8BOM = "\uFEFF"

// byteOrderMark is one byte-order mark and how text is written after it.
type byteOrderMark struct {
	mark   string
	encode func(text string) []byte
}

// byteOrderMarks, UTF-32 before UTF-16: the little-endian UTF-32 mark
// begins with the UTF-16 one.
var byteOrderMarks = [...]byteOrderMark{
	{utf8BOM, func(s string) []byte { return []byte(s) }},
	{"\xFF\xFE\x00\x00", func(s string) []byte { return utf32(s, binary.LittleEndian) }},
	{"\x00\x00\xFE\xFF", func(s string) []byte { return utf32(s, binary.BigEndian) }},
	{"\xFF\xFE", func(s string) []byte { return utf16Of(s, binary.LittleEndian) }},
	{"\xFE\xFF", func(s string) []byte { return utf16Of(s, binary.BigEndian) }},
}

// onlyMark returns the byte-order mark content consists of, if it is one.
func onlyMark(content string) (byteOrderMark, bool) {
	for _, m := range byteOrderMarks {
		if content == m.mark {
			return m, true
		}
	}
	return byteOrderMark{}, false
}

// emptyFile reports whether content is empty but for a byte-order mark.
func emptyFile(content string) bool {
	_, ok := onlyMark(content)
	return content == "" || ok
}

// filled is what an empty file holding content (nothing, or only a
// byte-order mark) holds once filled with text: text after the mark, in
// the mark's encoding (a mark text starts with is the file's own).
func filled(content, text string) []byte {
	m, ok := onlyMark(content)
	if !ok {
		return []byte(text)
	}
	return append([]byte(m.mark), m.encode(strings.TrimPrefix(text, utf8BOM))...)
}

// utf16Of is s in UTF-16 in byte order o.
func utf16Of(s string, o binary.AppendByteOrder) []byte {
	units := utf16.Encode([]rune(s))
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		b = o.AppendUint16(b, u)
	}
	return b
}

// utf32 is s in UTF-32 in byte order o.
func utf32(s string, o binary.AppendByteOrder) []byte {
	b := make([]byte, 0, 4*len(s))
	for _, r := range s {
		b = o.AppendUint32(b, uint32(r))
	}
	return b
}
