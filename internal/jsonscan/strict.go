package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Strict decodes data, one JSON object and nothing after it, into v,
// refusing what encoding/json would quietly accept: a key written twice
// (it keeps the last), a key not in lower case (it matches keys in any
// case), and a key v has no field for. What a caller checks is then what
// it acts on. It is Link's one strict reader of a small JSON object at a
// trust boundary (a tool's arguments, a message at the way in, a record
// on disk); the caller says whose object it was in its error.
func Strict(data []byte, v any) error {
	seen := map[string]bool{}
	var bad error
	if err := Members(bytes.TrimSpace(data), func(k string, _ Span) {
		switch {
		case bad != nil:
		case k != strings.ToLower(k):
			bad = fmt.Errorf("%q is not in lower case", k)
		case seen[k]:
			bad = fmt.Errorf("%q is written twice", k)
		}
		seen[k] = true
	}); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("more after the object")
	}
	return nil
}
