// Package movetest writes move streams for tests, hostile ones among
// them: entries the format's Writer would never write (a path with "..",
// a file through a link, a hard link, a cut or reordered stream), so a
// receiver's refusals can be shown on the bytes an attacker could send.
// Tests only: no binary links it.
package movetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"strings"

	"lnk.dev/lnk/internal/moveentry"
)

// Raw builds a move's plaintext entry by entry, checking nothing.
type Raw struct {
	B     bytes.Buffer
	count uint64
}

// NewRaw starts a stream with the format's magic and a head.
func NewRaw(id, name string) *Raw {
	r := &Raw{}
	r.B.WriteString(moveentry.Magic)
	h, _ := json.Marshal(moveentry.Head{ID: id, Name: name})
	r.Kind('h')
	r.Bytes(h)
	return r
}

// Kind writes a kind byte, counting it.
func (r *Raw) Kind(k byte) *Raw { r.count++; r.B.WriteByte(k); return r }

// Uvarint writes a number.
func (r *Raw) Uvarint(v uint64) *Raw {
	r.B.Write(binary.AppendUvarint(nil, v))
	return r
}

// Bytes writes a length-prefixed blob.
func (r *Raw) Bytes(b []byte) *Raw { r.Uvarint(uint64(len(b))); r.B.Write(b); return r }

// Phase starts a phase.
func (r *Raw) Phase(p byte) *Raw { r.Kind('p'); r.B.WriteByte(p); return r }

// Settings writes the switch's settings, with no buckets.
func (r *Raw) Settings(agent, sandbox, secrets []byte) *Raw {
	return r.SettingsBuckets(agent, sandbox, secrets, nil)
}

// SettingsBuckets writes the switch's settings with the sealed blob of
// the agent's rclone.conf.
func (r *Raw) SettingsBuckets(agent, sandbox, secrets, buckets []byte) *Raw {
	r.Kind('s')
	return r.Bytes(agent).Bytes(sandbox).Bytes(secrets).Bytes(buckets)
}

// Dir writes a folder.
func (r *Raw) Dir(path string, mode uint64) *Raw {
	return r.Kind('d').Bytes([]byte(path)).Uvarint(mode)
}

// File writes a file with its right SHA-256.
func (r *Raw) File(path string, mode uint64, data []byte) *Raw {
	sum := sha256.Sum256(data)
	return r.FileSum(path, mode, data, sum[:])
}

// FileSum writes a file with the SHA-256 given.
func (r *Raw) FileSum(path string, mode uint64, data, sum []byte) *Raw {
	r.Kind('f').Bytes([]byte(path)).Uvarint(mode).Uvarint(uint64(len(data)))
	r.B.Write(data)
	r.B.Write(sum)
	return r
}

// Link writes a link.
func (r *Raw) Link(path, target string) *Raw {
	return r.Kind('l').Bytes([]byte(path)).Bytes([]byte(target))
}

// HardLink writes a hard link entry, a kind the format has not.
func (r *Raw) HardLink(path, target string) *Raw {
	return r.Kind('k').Bytes([]byte(path)).Bytes([]byte(target))
}

// End writes the end with the right count.
func (r *Raw) End() *Raw { n := r.count; return r.Kind('e').Uvarint(n) }

// Agent is a minimal agent.toml for id and name.
func Agent(id, name string) []byte {
	return []byte("id = \"" + id + "\"\nname = \"" + name + "\"\nowner = \"someone\"\ncreated = \"2026-01-01T00:00:00Z\"\n")
}

// Good is a whole, well-formed stream of agent id called name: a file in
// its files folder, a note in memory, a conversation.
func Good(id, name string) *Raw {
	r := NewRaw(id, name).Phase('c').
		Dir("files", 0o700).File("files/hello.txt", 0o644, []byte("hello\n")).
		Dir("memory", 0o700).File("memory/index.db", 0o600, []byte("index")).
		Phase('s').Settings(Agent(id, name), []byte("# grants\n"), nil).
		Dir("chats", 0o700).File("chats/c1.jsonl", 0o600, []byte("{\"role\":\"user\"}\n"))
	return r
}

// WithBuckets is a whole stream of agent id called name whose switch
// carries buckets as its sealed rclone.conf blob: a receiver's checks of
// what it opens are shown on it (sealed, by the caller, to its key).
func WithBuckets(id, name string, buckets []byte) *Raw {
	return NewRaw(id, name).Phase('c').
		Dir("files", 0o700).File("files/hello.txt", 0o644, []byte("hello\n")).
		Phase('s').SettingsBuckets(Agent(id, name), nil, nil, buckets).
		Dir("chats", 0o700).File("chats/c1.jsonl", 0o600, []byte("{\"role\":\"user\"}\n")).End()
}

// Hostile are streams a receiver must refuse whole, by name, each
// otherwise well formed and ended, for agent id called name.
func Hostile(id, name string) map[string][]byte {
	out := map[string][]byte{}
	add := func(n string, r *Raw) { out[n] = r.B.Bytes() }
	start := func() *Raw {
		return NewRaw(id, name).Phase('c').Dir("files", 0o700).File("files/ok.txt", 0o644, []byte("ok"))
	}
	finish := func(r *Raw) *Raw {
		return r.Phase('s').Settings(Agent(id, name), nil, nil).Dir("chats", 0o700).End()
	}
	add("dotdot", finish(start().File("files/../../escape.txt", 0o644, []byte("x"))))
	add("dotdot-area", finish(start().Dir("..", 0o700)))
	add("absolute", finish(start().File("/tmp/escape.txt", 0o644, []byte("x"))))
	add("link-then-file", finish(start().Link("files/out", "/tmp").File("files/out/escape.txt", 0o644, []byte("x"))))
	add("link-then-folder", finish(start().Link("files/out", "..").Dir("files/out/x", 0o700)))
	add("hard-link-out", finish(start().HardLink("files/passwd", "/etc/passwd")))
	add("area-not-its-phase", finish(start().Dir("home", 0o700)))
	add("wrong-hash", finish(start().FileSum("files/bad.txt", 0o644, []byte("abc"), make([]byte, 32))))
	deep := start()
	p := "files"
	for i := 0; i < moveentry.MaxDepth+1; i++ {
		p += "/d"
		deep.Dir(p, 0o700)
	}
	add("33-deep", finish(deep))
	add("twice", finish(start().File("files/ok.txt", 0o644, []byte("again"))))
	add("file-before-folder", finish(start().File("files/sub/x.txt", 0o644, []byte("x"))))
	g := Good(id, name)
	whole := append([]byte(nil), g.End().B.Bytes()...)
	add("missing-end", Good(id, name))
	add("truncated", &Raw{B: *bytes.NewBuffer(whole[:len(whole)-20])})
	add("extended", &Raw{B: *bytes.NewBuffer(append(append([]byte(nil), whole...), 'd'))})
	wrongCount := Good(id, name).Kind('e').Uvarint(3)
	add("end-miscounted", wrongCount)
	add("switch-first", NewRaw(id, name).Phase('s').Settings(Agent(id, name), nil, nil).Dir("chats", 0o700).End())
	add("other-format", &Raw{B: *bytes.NewBufferString(strings.Replace(string(whole), moveentry.Magic, "lnk-move/v9\n", 1))})
	// v1, an older lnk's: its settings held three blobs.
	older := &Raw{}
	older.B.WriteString("lnk-move/v1\n")
	h, _ := json.Marshal(moveentry.Head{ID: id, Name: name})
	older.Kind('h').Bytes(h).Phase('c').Dir("files", 0o700).Phase('s').Kind('s').
		Bytes(Agent(id, name)).Bytes(nil).Bytes(nil).Dir("chats", 0o700).End()
	add("older-format", older)
	return out
}
