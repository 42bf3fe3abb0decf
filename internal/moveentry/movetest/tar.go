package movetest

import (
	"archive/tar"
	"bytes"
	"strings"

	"lnk.dev/lnk/internal/moveentry"
)

// Tar builds a backup archive (a standard tar) entry by entry, checking
// nothing: what an agent that can write its files folder could put in
// .lnk-backup.
type Tar struct {
	b  bytes.Buffer
	tw *tar.Writer
}

// NewTar starts an archive.
func NewTar() *Tar {
	t := &Tar{}
	t.tw = tar.NewWriter(&t.b)
	return t
}

func (t *Tar) add(h *tar.Header, data []byte) *Tar {
	if err := t.tw.WriteHeader(h); err != nil {
		panic(err)
	}
	t.tw.Write(data)
	return t
}

// Dir adds a folder.
func (t *Tar) Dir(name string, mode int64) *Tar {
	return t.add(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode}, nil)
}

// File adds a regular file.
func (t *Tar) File(name string, mode int64, data []byte) *Tar {
	return t.add(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))}, data)
}

// Link adds a symbolic link.
func (t *Tar) Link(name, target string) *Tar {
	return t.add(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}, nil)
}

// Header adds any header as it is, with data.
func (t *Tar) Header(h *tar.Header, data []byte) *Tar { return t.add(h, data) }

// Bytes ends the archive and returns it.
func (t *Tar) Bytes() []byte {
	t.tw.Close()
	return t.b.Bytes()
}

// HostileTar is a hostile archive and the refusal it must meet.
type HostileTar struct {
	Data []byte
	Want error
}

// GoodHomeTar is a well-formed harness archive: folders, files (a
// setuid one, whose bit goes), a link inside it.
func GoodHomeTar() []byte {
	return NewTar().Dir("home", 0o700).Dir("home/state", 0o700).
		File("home/state/notes.md", 0o600, []byte("restored notes\n")).
		File("home/run.sh", 0o4755, []byte("#!/bin/sh\n")).
		Link("home/state/latest", "notes.md").Bytes()
}

// HostileHomeTars are harness archives (.lnk-backup/link.tar) a restore
// must refuse whole, by name.
func HostileHomeTars() map[string]HostileTar {
	deep := NewTar().Dir("home", 0o700)
	p := "home"
	for i := 0; i <= moveentry.MaxDepth; i++ {
		p += "/d"
		deep.Dir(p, 0o700)
	}
	good := GoodHomeTar()
	cut := good[:3*512+4] // in notes.md's bytes, the fourth block
	noEnd := NewTar().Dir("home", 0o700).File("home/a", 0o600, []byte("a"))
	noEnd.tw.Flush() // never closed: whole entries, no end blocks
	noEndB := noEnd.b.Bytes()
	big := NewTar().Dir("home", 0o700)
	big.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "home/big", Mode: 0o600, Size: 1 << 40})
	return map[string]HostileTar{
		"dotdot":          {NewTar().Dir("home", 0o700).File("home/../escape", 0o600, []byte("x")).Bytes(), moveentry.ErrPath},
		"dotdot-top":      {NewTar().File("../escape", 0o600, []byte("x")).Bytes(), moveentry.ErrPath},
		"absolute":        {NewTar().Dir("home", 0o700).File("/tmp/escape", 0o600, []byte("x")).Bytes(), moveentry.ErrPath},
		"dot-slash":       {NewTar().Dir("./home", 0o700).Bytes(), moveentry.ErrPath},
		"another-area":    {NewTar().Dir("chats", 0o700).File("chats/c.jsonl", 0o600, []byte("{}\n")).Bytes(), moveentry.ErrPath},
		"link-then-file":  {NewTar().Dir("home", 0o700).Link("home/out", "/tmp").File("home/out/x", 0o600, []byte("x")).Bytes(), moveentry.ErrPath},
		"link-then-dir":   {NewTar().Dir("home", 0o700).Link("home/out", "..").Dir("home/out/x", 0o700).Bytes(), moveentry.ErrPath},
		"hard-link":       {NewTar().Dir("home", 0o700).Header(&tar.Header{Typeflag: tar.TypeLink, Name: "home/h", Linkname: "/etc/passwd"}, nil).Bytes(), moveentry.ErrArchiveLink},
		"fifo":            {NewTar().Dir("home", 0o700).Header(&tar.Header{Typeflag: tar.TypeFifo, Name: "home/p", Mode: 0o600}, nil).Bytes(), moveentry.ErrEntry},
		"device":          {NewTar().Dir("home", 0o700).Header(&tar.Header{Typeflag: tar.TypeChar, Name: "home/null", Mode: 0o666, Devmajor: 1, Devminor: 3}, nil).Bytes(), moveentry.ErrEntry},
		"33-deep":         {deep.Bytes(), moveentry.ErrDepth},
		"twice":           {NewTar().Dir("home", 0o700).File("home/a", 0o600, []byte("1")).File("home/a", 0o600, []byte("2")).Bytes(), moveentry.ErrPath},
		"file-before-dir": {NewTar().Dir("home", 0o700).File("home/d/a", 0o600, []byte("a")).Bytes(), moveentry.ErrOrder},
		"area-a-file":     {NewTar().File("home", 0o600, []byte("a")).Bytes(), moveentry.ErrPath},
		"cut":             {cut, moveentry.ErrArchive},
		"no-end":          {noEndB, moveentry.ErrArchive},
		"size-past-end":   {big.b.Bytes(), moveentry.ErrSize},
		"long-name":       {NewTar().Dir("home", 0o700).File("home/"+strings.Repeat("n", 256), 0o600, nil).Bytes(), moveentry.ErrPath},
	}
}

// HostileAgentTars are Agent.tar archives a restore must refuse whole:
// never a link of any kind, never memory's index or the scheduler's jobs.
func HostileAgentTars() map[string]HostileTar {
	return map[string]HostileTar{
		"agent-symlink":  {NewTar().Dir("chats", 0o700).Link("chats/c.jsonl", "/etc/passwd").Bytes(), moveentry.ErrArchiveLink},
		"agent-memory":   {NewTar().Dir("memory", 0o700).File("memory/index.db", 0o600, []byte("x")).Bytes(), moveentry.ErrPath},
		"agent-schedule": {NewTar().Dir("schedule", 0o700).File("schedule/job.json", 0o600, []byte("{}")).Bytes(), moveentry.ErrPath},
		"agent-home":     {NewTar().Dir("home", 0o700).Bytes(), moveentry.ErrPath},
	}
}
