package tooldef

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/secret"
)

// Folder is where definitions live, relative to HOME.
const Folder = ".lnk/sandbox/tools"

// MaxFile caps a definition file's size.
const MaxFile = 1 << 20

// file is the definition's form on disk. It is the one place values are
// written as they are.
type file struct {
	Name    string            `json:"name"`
	Command []string          `json:"command"`
	URL     string            `json:"url,omitempty"`
	Env     map[string]string `json:"env"`
	Shared  bool              `json:"shared,omitempty"`
}

// Store reads and writes definitions under one HOME.
type Store struct{ Home string }

func (s Store) root() (*resolve.Root, error) {
	h, err := resolve.OpenRoot(s.Home)
	if err != nil {
		return nil, fmt.Errorf("opening HOME %s: %w", s.Home, err)
	}
	return h, nil
}

// Path is the definition file of name, for messages.
func (s Store) Path(name string) string {
	return filepath.Join(s.Home, Folder, name+".json")
}

// Save writes d atomically (0600, folders 0700), never through a link,
// replacing an earlier definition of the same name.
func (s Store) Save(d *Definition) error {
	if err := d.check(); err != nil {
		return err
	}
	f := file{Name: d.Name, Command: d.Command, URL: d.URL, Env: map[string]string{}, Shared: d.Shared}
	for k, v := range d.Env {
		f.Env[k] = string(v.Bytes())
	}
	b, err := json.MarshalIndent(f, "", "  ")
	clear(f.Env)
	if err != nil {
		return err
	}
	defer clear(b)
	h, err := s.root()
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.MkdirAll(Folder, 0o700); err != nil {
		return fmt.Errorf("making ~/%s: %w", Folder, err)
	}
	if _, err := h.WriteFile(Folder+"/"+d.Name+".json", append(b, '\n'), resolve.WriteOptions{Mode: 0o600}); err != nil {
		return fmt.Errorf("writing %s: %w", s.Path(d.Name), err)
	}
	return nil
}

// Load reads the definition of name: strictly (an unknown field, a
// missing command, a bad name or argument is refused), never through a
// link, at most MaxFile bytes.
func (s Store) Load(name string) (*Definition, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	h, err := s.root()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	b, _, err := h.ReadFile(Folder+"/"+name+".json", MaxFile)
	if errors.Is(err, resolve.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s (lnk sandbox tool list shows the tools)", ErrNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.Path(name), err)
	}
	defer clear(b)
	d, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Path(name), err)
	}
	if d.Name != name {
		d.Destroy()
		return nil, fmt.Errorf("%s: names tool %q, not %q", s.Path(name), d.Name, name)
	}
	return d, nil
}

// Parse decodes a definition file strictly. The values it returns are
// secrets; the caller destroys them (Definition.Destroy).
func Parse(b []byte) (*Definition, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			return nil, fmt.Errorf("%w: %v", ErrField, err)
		}
		return nil, fmt.Errorf("not a tool's definition: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a tool's definition: data after the object")
	}
	d := &Definition{Name: f.Name, Command: f.Command, URL: f.URL, Env: map[string]*secret.Value{}, Shared: f.Shared}
	for k, v := range f.Env {
		sv, err := secret.FromString(v)
		if err != nil {
			d.Destroy()
			return nil, fmt.Errorf("env %s: %v", k, err)
		}
		d.Env[k] = sv
	}
	clear(f.Env)
	if err := d.check(); err != nil {
		d.Destroy()
		return nil, err
	}
	return d, nil
}

func (d *Definition) check() error {
	if err := CheckName(d.Name); err != nil {
		return err
	}
	if err := CheckCommand(d.Command); err != nil {
		return err
	}
	if d.URL != "" {
		if err := CheckURL(d.URL); err != nil {
			return err
		}
	}
	for k := range d.Env {
		if err := CheckEnvName(k); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes the definition of name.
func (s Store) Remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	h, err := s.root()
	if err != nil {
		return err
	}
	defer h.Close()
	err = h.Remove(Folder + "/" + name + ".json")
	if errors.Is(err, resolve.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return err
}

// Names lists the tools defined, sorted. A file that is not a
// definition's name (another name, a link, a folder) is left out.
func (s Store) Names() ([]string, error) {
	h, err := s.root()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	ents, err := h.List(Folder, resolve.ListOptions{})
	if errors.Is(err, resolve.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing ~/%s: %w", Folder, err)
	}
	var names []string
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name, ".json")
		if !ok || e.Type != 0 || CheckName(n) != nil {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}
