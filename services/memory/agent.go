package memory

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// Engine is the name of Link Memory's folder in the agent's own
// Agent/memory/ (the index, 0700).
const Engine = "link"

// Agent is one agent Link Memory serves: handles on its Home and its
// own folder (Agent/), its memory folder (Agent/memory, 0700) and its
// index.
type Agent struct {
	ID    string
	home  int
	own   int
	mem   int
	index *Index
	// Log takes one line for each document refused, with its reason.
	Log func(format string, args ...any)
	// Extract is a Word ("docx") or PDF ("pdf") document's text, taken in
	// a child process (extract.Extractor); nil leaves them out.
	Extract func(kind string, doc []byte) (string, error)
	// Embed is the model's vector for each text (embed.Client.Embed); nil,
	// or an error, and search is by words only.
	Embed func(texts []string) ([][]float32, error)
	// EmbedQuery is a search's query vector, waited for a bounded time
	// (embed.Client.EmbedQuery); nil takes it from Embed.
	EmbedQuery func(query string) ([]float32, error)
	// beforeOpen, for tests, runs before each name is opened.
	beforeOpen func(path string)
	// embedding is held by the one pass giving chunks their vectors
	// (embedChunks), outside the index's lock.
	embedding sync.Mutex
	// leftOut is each document the last refresh left out, with why: a
	// refusal is logged once, not at every refresh while it stands.
	leftOut map[string]string
	// failed is each document whose text the last refresh could not
	// extract, as it was (walker.failed).
	failed map[string]failedDoc
}

// OpenAgent opens the agent id's index in own/memory/link (both folders
// made 0700 when missing and refused when not the owner's 0700 ones),
// holding duplicates of home's and own's handles.
func OpenAgent(id string, home, own *os.File) (*Agent, error) {
	a := &Agent{ID: id, home: -1, own: -1, mem: -1, Log: func(string, ...any) {}}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	var err error
	if a.home, err = unix.FcntlInt(home.Fd(), unix.F_DUPFD_CLOEXEC, 0); err != nil {
		return nil, err
	}
	if a.own, err = unix.FcntlInt(own.Fd(), unix.F_DUPFD_CLOEXEC, 0); err != nil {
		return nil, err
	}
	if a.mem, err = ownerfile.MakeDir(a.own, "memory", unix.O_RDONLY, ownerfile.PrivateDir); err != nil {
		return nil, fmt.Errorf("agent %s: its memory folder: %w", id, err)
	}
	eng, err := ownerfile.MakeDir(a.mem, Engine, unix.O_RDONLY, ownerfile.PrivateDir)
	if err != nil {
		return nil, fmt.Errorf("agent %s: its index folder: %w", id, err)
	}
	defer unix.Close(eng)
	dir, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", eng))
	if err != nil {
		return nil, err
	}
	if a.index, err = OpenIndex(dir + "/index.db"); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

// Refresh brings the index up to date with the agent's documents: each
// new or changed one read again, each gone one forgotten (its path and
// title kept for list {since}). A document refused is logged and left
// out; only an error of the index or of the agent's folders themselves
// is returned.
func (a *Agent) Refresh() error {
	if err := a.refreshDocs(); err != nil {
		return err
	}
	return a.embedChunks()
}

// refreshDocs is Refresh's reading and indexing, under the index's lock.
func (a *Agent) refreshDocs() error {
	a.index.mu.Lock()
	defer a.index.mu.Unlock()
	known, err := a.index.known()
	if err != nil {
		return err
	}
	now := map[string]string{}
	failed := map[string]failedDoc{}
	defer func() { a.leftOut, a.failed = now, failed }()
	// One transaction for the whole refresh: a crash leaves the index as
	// it was, and SQLite syncs once.
	return a.index.tx(func() error {
		w := &walker{known: known, seen: map[string]bool{}, beforeOpen: a.beforeOpen, extract: a.Extract, failed: a.failed, failedNow: failed,
			store: func(f found) error { return a.index.put(f.doc, f.body) },
			refuse: func(path string, err error) {
				why := err.Error()
				if a.leftOut[path] != why {
					a.Log("memory: agent %s: %s left out: %s", a.ID, path, why)
				}
				now[path] = why
			}}
		if err := w.walkHome(a.home); err != nil {
			return fmt.Errorf("agent %s: Home's memory/: %w", a.ID, err)
		}
		if err := w.walkChats(a.own); err != nil {
			return fmt.Errorf("agent %s: its conversations: %w", a.ID, err)
		}
		if w.storeErr != nil {
			return fmt.Errorf("agent %s: indexing: %w", a.ID, w.storeErr)
		}
		at := time.Now()
		for p, d := range known {
			if !w.seen[p] {
				if err := a.index.drop(d, at); err != nil {
					return fmt.Errorf("agent %s: forgetting %s: %w", a.ID, p, err)
				}
			}
		}
		return nil
	})
}

// Close closes the index and the handles.
func (a *Agent) Close() error {
	var err error
	if a.index != nil {
		err = a.index.Close()
	}
	for _, fd := range []int{a.home, a.own, a.mem} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	return err
}
