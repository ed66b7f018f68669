package config

import (
	"errors"
	"testing"
)

// FuzzDecodeFleetDoc: whatever the bucket holds, decoding it never panics;
// it is refused as ErrBadFleetDoc, or it is a document whose digest is its
// content's, whose content is a user layer, and which encodes back to a
// record that decodes to the same document.
func FuzzDecodeFleetDoc(f *testing.F) {
	f.Add([]byte(`{"v":1,"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","pushed_by":"ops","pushed_at":"2026-12-02T01:00:00Z","content":""}`))
	f.Add([]byte(`{"v":1,"sha256":"x","content":"YWdlbnRzOiB7fQ=="}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeFleetDoc(data, 1)
		if err != nil {
			if !errors.Is(err, ErrBadFleetDoc) {
				t.Fatalf("error %v is not ErrBadFleetDoc", err)
			}
			return
		}
		if Digest(d.Content) != d.Digest {
			t.Fatalf("accepted a digest that is not its content's")
		}
		if _, err := d.layer(); err != nil {
			t.Fatalf("accepted content that is no layer: %v", err)
		}
		b, err := d.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeFleetDoc(b, 1)
		if err != nil || again.Digest != d.Digest || string(again.Content) != string(d.Content) {
			t.Fatalf("re-encoded document decodes to %+v, %v", again, err)
		}
	})
}
