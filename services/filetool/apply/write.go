package apply

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"lnk.dev/lnk/internal/resolve"
)

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

type replaceArgs struct {
	Path string  `json:"path"`
	Old  string  `json:"old"`
	New  *string `json:"new"`
	All  bool    `json:"all,omitempty"`
}

// WriteAnswer is a write's or a replace's answer: the new version, and
// the unified diff from the text the file held (or /dev/null), or past
// 16 KB or from a file that held no text, DiffCut and the new text's
// SHA-256.
type WriteAnswer struct {
	Path     string `json:"path"`
	Version  string `json:"version"`
	Created  bool   `json:"created,omitempty"`
	Replaced int    `json:"replaced,omitempty"`
	Diff     string `json:"diff,omitempty"`
	DiffCut  bool   `json:"diff_cut,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
}

// writeCall writes a whole file. It names the version the session last
// read or wrote of it; of a file the session never saw, the version it
// reads now, or absent for a new one.
func (s *Session) writeCall(raw []byte) (any, error) {
	var a writeArgs
	if err := decodeArgs("write", raw, &a); err != nil {
		return nil, err
	}
	if a.Content == nil {
		return nil, refused("write", "", fmt.Errorf("%w: content is missing", ErrUsage))
	}
	if err := s.checkWrite("write", a.Path); err != nil {
		return nil, err
	}
	data := []byte(*a.Content)
	if err := checkNew("write", a.Path, data); err != nil {
		return nil, err
	}
	old, cur, err := s.files.Read(a.Path, MaxFile)
	switch {
	case errors.Is(err, resolve.ErrNotFound):
		old, cur = nil, "absent"
		// A new file in a new folder: the folders on the way are made,
		// each beneath the one before, never through a link.
		if dir := path.Dir(a.Path); dir != "." {
			if err := s.files.MkdirAll(dir); err != nil {
				return nil, refused("write", a.Path, reason(err))
			}
		}
	case errors.Is(err, resolve.ErrTooLarge):
		return nil, refused("write", a.Path, ErrTooLarge)
	case err != nil:
		return nil, refused("write", a.Path, reason(err))
	}
	expect := cur
	if seen, ok := s.seen[a.Path]; ok {
		if seen != cur {
			return nil, s.changed("write", a.Path)
		}
		expect = seen
	}
	return s.put("write", a.Path, old, data, expect, 0)
}

// replace swaps old for new in a text file, naming the version it read.
// old must occur once, or with all, at least once.
func (s *Session) replace(raw []byte) (any, error) {
	var a replaceArgs
	if err := decodeArgs("replace", raw, &a); err != nil {
		return nil, err
	}
	if a.Old == "" || a.New == nil {
		return nil, refused("replace", "", fmt.Errorf("%w: old and new are both needed, old not empty", ErrUsage))
	}
	if err := s.checkWrite("replace", a.Path); err != nil {
		return nil, err
	}
	old, v, err := s.readText("replace", a.Path)
	if err != nil {
		return nil, err
	}
	n := bytes.Count(old, []byte(a.Old))
	switch {
	case n == 0:
		return nil, refused("replace", a.Path, fmt.Errorf("%w: the old text is not in the file", ErrUsage))
	case n > 1 && !a.All:
		return nil, refused("replace", a.Path, fmt.Errorf("%w: the old text is in the file %d times; give more of it, or all", ErrUsage, n))
	}
	data := bytes.ReplaceAll(old, []byte(a.Old), []byte(*a.New))
	if err := checkNew("replace", a.Path, data); err != nil {
		return nil, err
	}
	return s.put("replace", a.Path, old, data, v, n)
}

// checkNew refuses new content over 4 MiB or not text.
func checkNew(op, name string, data []byte) error {
	if len(data) > MaxFile {
		return refused(op, name, ErrTooLarge)
	}
	if !isText(data) {
		return refused(op, name, ErrNotText)
	}
	return nil
}

// put writes data naming expect, then remembers the new version, forgets
// a kept page of the file, and answers with the diff from old.
func (s *Session) put(op, name string, old, data []byte, expect string, replaced int) (any, error) {
	v, err := s.files.Write(name, data, expect)
	if errors.Is(err, resolve.ErrChanged) || errors.Is(err, resolve.ErrExists) {
		return nil, s.changed(op, name)
	}
	if err != nil {
		return nil, refused(op, name, reason(err))
	}
	s.seen[name] = v
	if s.page != nil && s.page.path == name {
		s.page = nil
	}
	ans := &WriteAnswer{Path: name, Version: v, Created: expect == "absent", Replaced: replaced}
	ans.Diff, ans.DiffCut = unified(name, old, data, expect == "absent")
	if ans.DiffCut {
		sum := sha256.Sum256(data)
		ans.SHA256 = hex.EncodeToString(sum[:])
	}
	return ans, nil
}

// changed refuses a write of a file changed since the session saw it,
// and forgets the version it held, so a read comes first.
func (s *Session) changed(op, name string) error {
	delete(s.seen, name)
	if s.page != nil && s.page.path == name {
		s.page = nil
	}
	return refused(op, name, fmt.Errorf("%w; read it again, then write", resolve.ErrChanged))
}

// unified is the diff from old to new, or cut (true) past 16 KB or where
// old was not text.
func unified(name string, old, new []byte, created bool) (string, bool) {
	if !isText(old) {
		return "", true
	}
	from := "a/" + name
	if created {
		from = "/dev/null"
	}
	edits := udiff.Lines(string(old), string(new))
	d, err := udiff.ToUnified(from, "b/"+name, string(old), edits, udiff.DefaultContextLines)
	if err != nil || len(d) > MaxDiff {
		return "", true
	}
	if d == "" {
		return "", false
	}
	return strings.TrimSuffix(d, "\n") + "\n", false
}
