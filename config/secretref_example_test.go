package config_test

import (
	"fmt"

	"github.com/stepgate/stepgate/config"
)

func ExampleSecretRefs() {
	refs, err := config.SecretRefs("Bearer secret://TOKEN")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range refs {
		fmt.Println(r, r.Name, r.Start, r.End)
	}
	_, err = config.SecretRefs("secret://9")
	fmt.Println(err)
	// Output:
	// secret://TOKEN TOKEN 7 21
	// secret:// at byte 0 is not followed by a name (a letter or _, then letters, digits or _)
}
