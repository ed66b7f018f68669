package mcp

import (
	"encoding/hex"
	"encoding/json"
)

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func hexOf(s string) string { return hex.EncodeToString([]byte(s)) }
