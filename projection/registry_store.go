package projection

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

var bucketRegistry = []byte("registry")

func writeRegistry(tx *bolt.Tx, scopes map[string][]byte) error {
	for id, v := range scopes {
		if err := tx.Bucket(bucketRegistry).Put([]byte(id), v); err != nil {
			return err
		}
	}
	return nil
}

func loadRegistry(tx *bolt.Tx, g Registry) error {
	return tx.Bucket(bucketRegistry).ForEach(func(k, v []byte) error {
		s := new(Scope)
		if err := json.Unmarshal(v, s); err != nil {
			return fmt.Errorf("checkpoint of scope %s: %w", k, err)
		}
		g[string(k)] = s
		return nil
	})
}
