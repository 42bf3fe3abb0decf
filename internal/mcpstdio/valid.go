package mcpstdio

import "lnk.dev/lnk/internal/jsonscan"

// ValidJSON is [encoding/json.Valid] of b: [jsonscan.Valid], the one fast
// validator (FuzzValidJSON holds it to json.Valid here too).
func ValidJSON(b []byte) bool { return jsonscan.Valid(b) }
