package apply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

// Session is one session's calls over [Files]. It is not safe for
// concurrent use: a session's calls come one at a time, a line each.
type Session struct {
	files Files
	write []string
	// agentFolder is whether instructions/, skills/, chats/ and memory/
	// name the agent folder, not folders of the files folder.
	agentFolder bool
	// seen is the version of each file this session last read or wrote,
	// by path: the version its next write names.
	seen map[string]string
	// page is the text of the last file read from line 1, which reads
	// from later lines page.
	page *page
	// Refused, if set, is told of each refusal once: the call and why,
	// never the path or the text.
	Refused func(op string, err error)
}

// NewSession starts a session over files, writing only beneath the folders
// write names (relative to the files folder; "." for all of it).
func NewSession(files Files, write []string) (*Session, error) {
	if err := checkWriteFolders(write); err != nil {
		return nil, err
	}
	s := &Session{files: files, write: append([]string(nil), write...), seen: map[string]string{}}
	if a, ok := files.(interface{ AgentFolder() bool }); ok {
		s.agentFolder = a.AgentFolder()
	}
	return s, nil
}

// calls is the request table: a call's name to its handler.
var calls = map[string]func(*Session, []byte) (any, error){
	"read":    (*Session).read,
	"write":   (*Session).writeCall,
	"replace": (*Session).replace,
	"find":    (*Session).find,
	"list":    (*Session).list,
}

// Call runs one call; an unknown name is refused.
func (s *Session) Call(name string, args json.RawMessage) (any, error) {
	h, ok := calls[name]
	if !ok {
		h = func(*Session, []byte) (any, error) {
			return nil, refused("call", "", fmt.Errorf("%w: no call named %q", ErrUsage, name))
		}
	}
	out, err := h(s, args)
	if err != nil && s.Refused != nil {
		s.Refused(name, err)
	}
	return out, err
}

// decodeArgs decodes a call's arguments by Link's one strict decoder
// (wire.Unmarshal): an unknown field, a field given twice or in another
// case, a missing one the call needs, a null where a value is needed, a
// wrong type or anything after the object is refused. A reader that
// takes the first of two "path"s, or "PATH" for "path", never sees
// arguments that mean something else here.
func decodeArgs(op string, raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := wire.Unmarshal(raw, v); err != nil {
		return refused(op, "", fmt.Errorf("%w: %v", ErrUsage, err))
	}
	return nil
}

// isText is what a text file is here: UTF-8 with no NUL.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

// readText reads a whole text file through files, refusing one over 4 MiB
// or not text, with the resolver's refusals for the rest.
func (s *Session) readText(op, name string) ([]byte, string, error) {
	b, v, err := s.files.Read(name, MaxFile)
	if errors.Is(err, resolve.ErrTooLarge) {
		return nil, "", refused(op, name, ErrTooLarge)
	}
	if err != nil {
		return nil, "", refused(op, name, reason(err))
	}
	if !isText(b) {
		return nil, "", refused(op, name, ErrNotText)
	}
	return b, v, nil
}

// reason is a resolver error without the path it repeats, keeping its
// kind for errors.Is.
func reason(err error) error {
	var re *resolve.Error
	switch {
	case errors.As(err, &re) && re.Kind != nil:
		return re.Kind
	case re != nil && re.Err != nil:
		return re.Err // the system's own refusal, as a read-only folder's EROFS
	}
	return err
}
