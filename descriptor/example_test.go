package descriptor_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/stepgate/stepgate/descriptor"
)

func ExampleFor() {
	type GrepInput struct {
		Pattern string `json:"pattern" jsonschema:"description=An RE2 regular expression"`
		Limit   int    `json:"limit,omitempty"`
	}
	d, err := descriptor.For[GrepInput, string]("grep", "Search file contents.",
		descriptor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name, d.Action, d.Effect)
	var schema any
	_ = json.Unmarshal(d.InputSchema, &schema)
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(schema)
	// Output:
	// grep grep read_only
	// {
	//   "$schema": "https://json-schema.org/draft/2020-12/schema",
	//   "additionalProperties": false,
	//   "properties": {
	//     "limit": {
	//       "type": "integer"
	//     },
	//     "pattern": {
	//       "description": "An RE2 regular expression",
	//       "type": "string"
	//     }
	//   },
	//   "required": [
	//     "pattern"
	//   ],
	//   "type": "object"
	// }
}
