package memory

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/services/memory/extract"
)

// Limits of what an index reads.
const (
	maxFile  = 1 << 20 // bytes of one document
	maxDepth = 32      // folders deep under memory/
	maxDocs  = 100000  // documents of one agent
)

// found is one document read during a walk.
type found struct {
	doc  Doc
	body string
}

// walker reads an agent's documents from its folders' handles. Each
// refusal (a link, a hidden name skipped is not one, a fifo, a file too
// large, another uid's) is reported to refuse and the walk goes on.
type walker struct {
	known map[string]Doc
	seen  map[string]bool
	// store indexes each document read, as it is read, so a walk holds
	// one document at a time; its first error ends the walk's work.
	store    func(found) error
	storeErr error
	refuse   func(path string, err error)
	// beforeOpen, for tests, runs before each name is opened.
	beforeOpen func(path string)
	// extract is a Word or PDF document's text (in a child process); nil
	// leaves Word documents out.
	extract func(kind string, doc []byte) (string, error)
	// failed is each document whose text the last refresh could not
	// extract, as it was then; failedNow is this walk's. One unchanged
	// since is left out again, for the same reason, without a child: a
	// document that loops its parser costs the child's 30 s once, not
	// every search's (every agent's, the extractor being one).
	failed, failedNow map[string]failedDoc
}

// failedDoc is a document, as it was, whose extraction failed, and why.
type failedDoc struct {
	doc Doc
	err error
}

func sameFile(a, b Doc) bool { return a.Size == b.Size && a.MTime == b.MTime && a.Ino == b.Ino }

// walkHome reads Home's memory/ folder, whose handle is home's.
func (w *walker) walkHome(home int) error {
	fd, err := w.openDir(home, "memory", "memory")
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return w.walkDir(fd, "memory", 0)
}

// walkChats reads chats/<thread>/conversation.md of the agent's own
// folder, whose handle is own.
func (w *walker) walkChats(own int) error {
	fd, err := w.openDir(own, "chats", "chats")
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	names, err := readNames(fd)
	if err != nil {
		return fmt.Errorf("chats: %w", err)
	}
	for _, n := range names {
		rel := "chats/" + n
		if hidden(n) {
			continue
		}
		t, err := w.openDir(fd, n, rel)
		if err != nil {
			w.refuse(rel, err)
			continue
		}
		w.readFile(t, "conversation.md", rel+"/conversation.md")
		unix.Close(t)
	}
	return nil
}

func (w *walker) walkDir(fd int, rel string, depth int) error {
	names, err := readNames(fd)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	for _, n := range names {
		if hidden(n) {
			continue
		}
		path := rel + "/" + n
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			w.refuse(path, err)
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if depth+1 >= maxDepth {
				w.refuse(path, fmt.Errorf("more than %d folders deep", maxDepth))
				continue
			}
			sub, err := w.openDir(fd, n, path)
			if err != nil {
				w.refuse(path, err)
				continue
			}
			err = w.walkDir(sub, path, depth+1)
			unix.Close(sub)
			if err != nil {
				w.refuse(path, err)
			}
		case unix.S_IFREG:
			w.readFile(fd, n, path)
		default:
			w.refuse(path, fmt.Errorf("not a regular file or folder (mode %o): Link Memory reads neither links nor devices, fifos or sockets", st.Mode&unix.S_IFMT))
		}
	}
	return nil
}

// openDir opens the folder name in dirfd through no link.
func (w *walker) openDir(dirfd int, name, path string) (int, error) {
	if w.beforeOpen != nil {
		w.beforeOpen(path)
	}
	fd, err := ownerfile.Open(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if errors.Is(err, unix.ENOTDIR) {
		return -1, fmt.Errorf("%s: %w", path, ownerfile.ErrLink)
	}
	if err != nil {
		return -1, err
	}
	if err := ownerfile.Check(fd, ownerfile.Rule{Type: unix.S_IFDIR}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%s: %w", path, err)
	}
	return fd, nil
}

// readFile reads the regular file name in dirfd (at most maxFile bytes,
// however it changes meanwhile) unless the index already holds it as it
// is.
func (w *walker) readFile(dirfd int, name, path string) {
	if w.storeErr != nil {
		return
	}
	if len(w.seen) >= maxDocs {
		w.refuse(path, fmt.Errorf("more than %d documents", maxDocs))
		return
	}
	if w.beforeOpen != nil {
		w.beforeOpen(path)
	}
	f, err := ownerfile.OpenFile(dirfd, name, ownerfile.Rule{Type: unix.S_IFREG})
	if errors.Is(err, unix.ENOENT) {
		return
	}
	if err != nil {
		w.refuse(path, err)
		return
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		w.refuse(path, err)
		return
	}
	limit := int64(maxFile)
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".doc") {
		w.refuse(path, errors.New("old Word documents (.doc) are not read here (only text, .docx and .pdf)"))
		return
	}
	kind := ""
	switch {
	case strings.HasSuffix(lower, ".docx"):
		kind = "docx"
	case strings.HasSuffix(lower, ".pdf"):
		kind = "pdf"
	}
	if kind != "" {
		limit = extract.MaxDocument
		if w.extract == nil {
			w.refuse(path, errors.New("Word and PDF documents are not read here"))
			return
		}
	}
	if st.Size > limit {
		w.refuse(path, fmt.Errorf("%d bytes, more than the %d a document may have", st.Size, limit))
		return
	}
	w.seen[path] = true
	d := Doc{Path: path, Size: st.Size, MTime: st.Mtim.Nano(), Ino: st.Ino}
	if k, ok := w.known[path]; ok && sameFile(k, d) {
		return
	}
	if f, ok := w.failed[path]; ok && kind != "" && sameFile(f.doc, d) {
		delete(w.seen, path)
		w.failedNow[path] = f
		w.refuse(path, f.err)
		return
	}
	body, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		delete(w.seen, path)
		w.refuse(path, err)
		return
	}
	if int64(len(body)) > limit {
		delete(w.seen, path)
		w.refuse(path, fmt.Errorf("grew past the %d bytes a document may have while read", limit))
		return
	}
	if kind != "" {
		text, err := w.extract(kind, body)
		if err != nil {
			delete(w.seen, path)
			w.failedNow[path] = failedDoc{d, err}
			w.refuse(path, err)
			return
		}
		body = []byte(text)
	}
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	d.Title = title(path, text)
	if w.storeErr == nil {
		w.storeErr = w.store(found{d, text})
	}
}

// readNames is the names in the folder fd, read through a duplicate
// this closes (fd stays open).
func readNames(fd int) ([]string, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "folder")
	defer f.Close()
	return f.Readdirnames(-1)
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }
