package askbroker

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// The store's refusals, each a typed error a caller can tell apart.
var (
	ErrLink       = errors.New("is a link, never followed")
	ErrNotPrivate = errors.New("is not the owner's alone")
	ErrAnswered   = errors.New("already answered: the first answer is final")
	ErrNoQuestion = errors.New("no such question")
)

// A Store is the owner's waiting questions, ~/.lnk/questions: one
// <id>.q file per question (0600), and an <id>.a file beside it once
// answered, linked in place so the first answer is final.
type Store struct {
	fd int // the questions folder, O_DIRECTORY|O_NOFOLLOW

	sweepMu sync.Mutex
	swept   time.Time

	watchOnce sync.Once
	watch     *watcher
	watchErr  error
}

// A Waiting question is one in the store.
type Waiting struct {
	ID       string    `json:"id"`
	Asked    time.Time `json:"asked"`
	Deadline time.Time `json:"deadline"`
	Question
}

// An Answer is the owner's (or the clock's) word on a question.
type Answer struct {
	Allow bool   `json:"allow"`
	By    string `json:"by"` // "store", "terminal", "dialog", "chat", "timeout", …
}

const maxRecord = MaxQuestionBytes * 2

// tempName is the stem of the store's temporary files: each is
// ".record.tmp-<random>" (ownerfile.CreateTemp), and sweep removes old ones.
const tempName = "record"

// OpenStore opens home/.lnk/questions, making .lnk and questions (0700)
// where missing. Neither may be a link or anyone's but the owner's.
func OpenStore(home string) (*Store, error) {
	h, err := unix.Open(home, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening home %s: %w", home, err)
	}
	defer unix.Close(h)
	lnk, err := privateDir(h, ".lnk")
	if err != nil {
		return nil, err
	}
	defer unix.Close(lnk)
	q, err := privateDir(lnk, "questions")
	if err != nil {
		return nil, err
	}
	return &Store{fd: q}, nil
}

// NewStore takes the questions folder as an open fd (as the kernel hands
// it to the broker); it must be a folder of the owner's alone.
func NewStore(f *os.File) (*Store, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := checkPrivate(fd, "the questions folder", unix.S_IFDIR); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Store{fd: fd}, nil
}

// Close releases the store's folder.
func (s *Store) Close() error {
	if s.watch != nil {
		s.watch.close()
	}
	return unix.Close(s.fd)
}

func privateDir(parent int, name string) (int, error) {
	fd, err := ownerfile.MakeDir(parent, name, unix.O_RDONLY, ownerfile.PrivateDir)
	switch {
	case errors.Is(err, ownerfile.ErrLink):
		return -1, fmt.Errorf("%s %w", name, ErrLink)
	case errors.Is(err, ownerfile.ErrNotOwners):
		return -1, fmt.Errorf("%s (%v) %w", name, err, ErrNotPrivate)
	case err != nil:
		return -1, fmt.Errorf("opening %s: %w", name, err)
	}
	return fd, nil
}

// checkPrivate refuses fd unless it is of kind, the owner's, and closed
// to group and others (the check is internal/ownerfile's).
func checkPrivate(fd int, what string, kind uint32) error {
	if err := ownerfile.Check(fd, ownerfile.Rule{Type: kind, Forbid: 0o077}); err != nil {
		return fmt.Errorf("%s (%v) %w", what, err, ErrNotPrivate)
	}
	return nil
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newID is 80 random bits, 16 letters and digits.
func newID() string {
	var b [10]byte
	rand.Read(b[:])
	return strings.ToLower(idEncoding.EncodeToString(b[:]))
}

// ValidID reports whether id is shaped like a question's id, so no name
// built from it can leave the store.
func ValidID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// Put adds q to the store, waiting until deadline, and returns its id.
func (s *Store) Put(q *Question, deadline time.Time) (string, error) {
	s.sweep(time.Now())
	w := Waiting{ID: newID(), Asked: time.Now().UTC(), Deadline: deadline.UTC(), Question: *q}
	b, err := json.Marshal(w)
	if err != nil {
		return "", err
	}
	tmp, err := s.writeTemp(b)
	if err != nil {
		return "", err
	}
	if err := ownerfile.Rename(s.fd, tmp, s.fd, w.ID+".q", unix.RENAME_NOREPLACE); err != nil {
		unix.Unlinkat(s.fd, tmp, 0)
		return "", fmt.Errorf("storing question: %w", err)
	}
	return w.ID, nil
}

// writeTemp writes b to a fresh 0600 file in the store and returns its
// name. The store does not fsync: a question lives no longer than the
// broker waiting on it, and after a crash that call is refused anyway;
// what a reader sees is whole all the same (O_EXCL temp, then rename or
// link), and a file left damaged by a crash reads as damaged, never as
// an answer.
func (s *Store) writeTemp(b []byte) (string, error) {
	name, err := ownerfile.CreateTemp(s.fd, tempName, b, ownerfile.Write{Mode: 0o600, NoSync: true})
	if err != nil {
		return "", fmt.Errorf("writing to the store: %w", err)
	}
	return name, nil
}

// Answer records a as the answer to question id. The answer is linked
// in place: the first one wins, and any later one gets [ErrAnswered].
func (s *Store) Answer(id string, a Answer) error {
	if _, err := s.Read(id); err != nil {
		if _, answered, _ := s.ReadAnswer(id); answered && errors.Is(err, ErrNoQuestion) {
			return fmt.Errorf("question %s %w", id, ErrAnswered)
		}
		return err
	}
	b, _ := json.Marshal(a)
	tmp, err := s.writeTemp(b)
	if err != nil {
		return err
	}
	defer unix.Unlinkat(s.fd, tmp, 0)
	if err := unix.Linkat(s.fd, tmp, s.fd, id+".a", 0); err != nil {
		if err == unix.EEXIST {
			return fmt.Errorf("question %s %w", id, ErrAnswered)
		}
		return fmt.Errorf("answering %s: %w", id, err)
	}
	return nil
}

// Folder is a duplicate of the questions folder's fd, to hand to the
// broker's process.
func (s *Store) Folder() (*os.File, error) {
	fd, err := unix.FcntlInt(uintptr(s.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "questions"), nil
}
