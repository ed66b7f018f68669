package fold

import "encoding/json"

// Clone returns a deep copy of the run, made through its JSON form (the form
// checkpoints store), so a copy equals what a reload would give.
func (r *Run) Clone() (*Run, error) { return deepCopy(r) }

func deepCopy(r *Run) (*Run, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	out := new(Run)
	return out, json.Unmarshal(b, out)
}
