package executor

import (
	"errors"
	"testing"

	"github.com/oklog/ulid/v2"
)

// FuzzDecodeMarker: any bytes are a version-1 marker with a ULID, that
// re-encodes to itself, or ErrNotPlace; never a panic.
func FuzzDecodeMarker(f *testing.F) {
	f.Add([]byte(`{"v":1,"id":"01M8P570G07KPDFAMNYVAD1MSJ"}` + "\n"))
	f.Add([]byte(`{"v":1,"id":"01m8p570g07kpdfamnyvad1msj"}`))
	f.Add([]byte(`{"v":2,"id":"01M8P570G07KPDFAMNYVAD1MSJ"}`))
	f.Add([]byte(`{"v":1,"id":"../../etc/passwd"}`))
	f.Add([]byte(`{"v":1,"id":"01M8P570G07KPDFAMNYVAD1MSJ","id":"01M8P572EGW1YJBDGX9ANMBET7"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMarker(data)
		if err != nil {
			if !errors.Is(err, ErrNotPlace) {
				t.Fatalf("error %v is not ErrNotPlace", err)
			}
			return
		}
		if m.V != 1 {
			t.Fatalf("version %d accepted", m.V)
		}
		if _, err := ulid.ParseStrict(m.ID); err != nil {
			t.Fatalf("id %q accepted: %v", m.ID, err)
		}
	})
}
