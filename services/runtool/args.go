package runtool

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"lnk.dev/lnk/internal/jsonscan"
	hstore "lnk.dev/lnk/services/harness/store"
)

// maxArgs bounds a call's arguments as they arrive: argv and a folder.
const maxArgs = 256 << 10

// Call is run's arguments (run__command and run__start): the program
// and its arguments, and the working folder, relative to the agent's
// files folder ("" is the folder itself).
type Call struct {
	Argv   []string `json:"argv"`
	Folder string   `json:"folder,omitempty"`
}

// Ref is run__read's and run__stop's arguments: a background command's
// ID, and for read the offset to read its output from.
type Ref struct {
	ID     string `json:"id"`
	Offset int64  `json:"offset,omitempty"`
}

// decodeStrict decodes raw, a JSON object, into v: an unknown field, a
// second value after it or more than maxArgs bytes is refused.
func decodeStrict(raw []byte, v any) error {
	if len(raw) > maxArgs {
		return fmt.Errorf("arguments of %d bytes, over %d", len(raw), maxArgs)
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		raw = []byte("{}")
	}
	if err := jsonscan.Strict(raw, v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// ParseCall reads run's arguments: argv of 1 to 4096 strings, each valid
// UTF-8 with no NUL, and a folder that is a clean relative path.
func ParseCall(raw []byte) (Call, error) {
	var c Call
	if err := decodeStrict(raw, &c); err != nil {
		return Call{}, err
	}
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return Call{}, errors.New("argv is empty: it names the program, then its arguments")
	}
	if len(c.Argv) > 4096 {
		return Call{}, fmt.Errorf("argv has %d strings, over 4096", len(c.Argv))
	}
	for i, a := range c.Argv {
		if strings.ContainsRune(a, 0) || !utf8.ValidString(a) {
			return Call{}, fmt.Errorf("argv[%d] holds a NUL or is not UTF-8", i)
		}
	}
	if c.Folder == "." {
		c.Folder = ""
	}
	if c.Folder != "" {
		if strings.HasPrefix(c.Folder, "/") || strings.ContainsRune(c.Folder, 0) || !utf8.ValidString(c.Folder) {
			return Call{}, fmt.Errorf("folder %q: a path relative to the files folder", c.Folder)
		}
		for _, part := range strings.Split(c.Folder, "/") {
			if part == "" || part == "." || part == ".." {
				return Call{}, fmt.Errorf("folder %q: a path relative to the files folder, with no empty, . or .. part", c.Folder)
			}
		}
	}
	return c, nil
}

// ParseRef reads run__read's and run__stop's arguments.
func ParseRef(raw []byte) (Ref, error) {
	var r Ref
	if err := decodeStrict(raw, &r); err != nil {
		return Ref{}, err
	}
	if !validID(r.ID) {
		return Ref{}, fmt.Errorf("id %q is not a background command's ID", r.ID)
	}
	if r.Offset < 0 {
		return Ref{}, fmt.Errorf("offset %d is negative", r.Offset)
	}
	return r, nil
}

// validID: a background command's ID is 16 lowercase hex digits.
func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// checkThread refuses a call naming no conversation, or a name that is
// no conversation's by the one rule Link Harness's store and the agent's
// way in apply (store.CheckThread): an ending named so could never be
// told.
func checkThread(t string) error {
	if t == "" {
		return errors.New("the call names no conversation (_meta link.local/thread): a background command is its conversation's")
	}
	if err := hstore.CheckThread(t); err != nil {
		return fmt.Errorf("the call's conversation is no conversation's name: %w", err)
	}
	return nil
}

// ParseNone reads the arguments of a call that takes none (list).
func ParseNone(raw []byte) error { return decodeStrict(raw, &struct{}{}) }
