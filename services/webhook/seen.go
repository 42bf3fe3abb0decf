package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// SeenName is the record of the posts the harness took, written whole;
// the ids taken since are in SeenLogName beside it.
const SeenName = "hooks-seen.json"

// KeepSeen is how long a taken post's id is kept: a repeat inside it is
// refused.
const KeepSeen = 30 * 24 * time.Hour

// maxSeenFile is the most of either file of the record that is read, and
// so the most Limits.MaxSeen may be: a record the listener itself wrote
// is never larger, and a listener always starts again on it.
const maxSeenFile = 64 << 20

// compactAt is the least the log grows to before the record is written
// whole again (more once the record is larger: writing it whole then
// costs no more per id than the appends did).
const compactAt = 1 << 20

// ErrRepeat is a post whose id was taken already, or is being handed on.
var ErrRepeat = errors.New("a repeat of a post already taken or being handed on")

// ErrFull is a post refused because the record holds as many ids as it
// may: it is taken again once the oldest ids pass 30 days.
var ErrFull = errors.New(SeenName + " holds as many ids as it may")

// seen is the record of taken posts ("<hook id> <post id>" → when taken)
// and the posts in flight. A taken post's id counts at once (a repeat is
// refused), and its taker is told only once its id is durable: the ids
// taken while a write is under way are appended together to the log,
// one write and one fdatasync (a group commit). The log is folded into
// hooks-seen.json, written whole (600, never through a link, fsynced),
// when it has grown as large, when the listener starts, and after a
// failed append. No id younger than 30 days is ever dropped: a post
// that would take the record past limit bytes is refused (ErrFull)
// before it is handed on, so that neither file is ever larger than the
// listener reads when it starts.
type seen struct {
	mu       sync.Mutex
	dir      *os.File
	lock     *os.File // hooks-seen.lock, held while the record is open
	limit    int64    // the most bytes of either file
	log      *seenLog
	broken   bool // the last append failed: the next write is a whole one
	taken    map[string]time.Time
	kept     []keptID         // the record: every id taken, in the order taken
	bytes    int64            // the record's size written whole: 2 + Σ (len(json)+1)
	inFlight map[string]int64 // posts being handed on, with the bytes each would add
	reserved int64            // the sum of inFlight's bytes
	pending  []byte           // the log lines of the ids taken since the last write began
	waiters  []chan error     // takers whose ids the next write records
	writing  bool             // a writer runs
	pruned   time.Time        // when begin last pruned, the record being full
	compact  bool             // ids were pruned: write the record whole next
	writes   atomic.Int64     // the writes made (appends and whole ones), which the bench counts
}

// keptID is one of the record's entries, its JSON made once, when it
// was taken: a write joins them rather than encode the whole map again.
type keptID struct {
	key  string
	at   time.Time
	json string // "<key>":"<at>"
}

// newKept refuses a key that is not UTF-8: JSON would write another in
// its place, which the record, read back, would not know as the same.
func newKept(key string, at time.Time) (keptID, error) {
	if !utf8.ValidString(key) {
		return keptID{}, errors.New("a post's id is not UTF-8")
	}
	k, err := json.Marshal(key)
	if err != nil {
		return keptID{}, err
	}
	t, err := json.Marshal(at)
	if err != nil {
		return keptID{}, err
	}
	return keptID{key: key, at: at, json: string(append(append(k, ':'), t...))}, nil
}

// cost is what an id adds to either file.
func (e keptID) cost() int64 { return int64(len(e.json)) + 1 }

// openSeen takes the record's lock (ErrListening when another listener
// holds it), reads the record in dir (hooks-seen.json, then the ids the
// log adds), forgets the ids 30 days old, and writes it whole, the log
// emptied. limit is Limits.MaxSeen (0: the most, 64 MiB). The lock is
// held until close: no other listener reads, folds or appends to the
// record meanwhile.
func openSeen(dir *os.File, limit int64) (*seen, error) {
	if limit <= 0 || limit > maxSeenFile {
		limit = maxSeenFile
	}
	lock, err := lockSeen(int(dir.Fd()))
	if err != nil {
		return nil, err
	}
	s := emptySeen()
	s.dir, s.lock, s.limit = dir, lock, limit
	if err := s.load(); err != nil {
		lock.Close()
		return nil, err
	}
	return s, nil
}

// emptySeen is a record of no id: `{}`, 2 bytes.
func emptySeen() *seen {
	return &seen{taken: map[string]time.Time{}, inFlight: map[string]int64{}, bytes: 2}
}

// load reads the record and folds the log into it (openSeen, the lock
// held).
func (s *seen) load() error {
	text, err := readRecord(int(s.dir.Fd()))
	missing := errors.Is(err, unix.ENOENT)
	switch {
	case missing:
	case err != nil:
		return fmt.Errorf("reading %s: %w", SeenName, err)
	default:
		if err := s.loadRecord(text); err != nil {
			return err
		}
	}
	return s.fold(time.Now(), missing)
}

// fold reads the log (opened again by its name) into the record and
// writes the record whole, the log emptied: at the start (unless the
// log is empty and no id is 30 days old: then the record on disk is
// already all of it), and after an append failed. The log is opened
// before the record is written, so that the record's fsync of the folder
// also keeps the log's name.
func (s *seen) fold(now time.Time, always bool) error {
	log, err := openSeenLog(int(s.dir.Fd()))
	if err != nil {
		return err
	}
	data, err := log.read(maxSeenFile)
	pruned := false
	if err == nil {
		s.mu.Lock()
		err = s.merge(data)
		if err == nil {
			pruned = s.prune(now)
		}
		s.mu.Unlock()
	}
	if err != nil {
		log.close()
		return err
	}
	if s.log != nil {
		s.log.close()
	}
	s.log = log
	if !always && len(data) == 0 && !pruned {
		return ownerfile.SyncDir(int(s.dir.Fd()))
	}
	return s.writeWhole(now)
}

// rebuild makes kept and bytes from taken (the strict reader's record).
func (s *seen) rebuild() error {
	s.kept, s.bytes = s.kept[:0], 2
	for k, at := range s.taken {
		e, err := newKept(k, at)
		if err != nil {
			return fmt.Errorf("%s: %w", SeenName, err)
		}
		s.kept = append(s.kept, e)
		s.bytes += e.cost()
	}
	slices.SortFunc(s.kept, func(a, b keptID) int { return a.at.Compare(b.at) })
	return nil
}

// begin marks key in flight, refusing a repeat, and a post the record
// has no room for (ErrFull) unless pruning the ids 30 days old (at most
// once a minute) makes it.
func (s *seen) begin(key string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, flying := s.inFlight[key]
	if t, ok := s.taken[key]; (ok && now.Sub(t) < KeepSeen) || flying {
		return ErrRepeat
	}
	e, err := newKept(key, now.UTC().Truncate(time.Second))
	if err != nil {
		return err
	}
	if !s.room(e.cost()) && now.Sub(s.pruned) >= time.Minute {
		s.pruned = now
		if s.prune(now) {
			s.compact = true
		}
	}
	if !s.room(e.cost()) {
		return ErrFull
	}
	s.inFlight[key] = e.cost()
	s.reserved += e.cost()
	return nil
}

// room is whether n bytes more keep the record, with the posts in
// flight, within the limit (s.mu held). The log needs no count of its
// own: it holds only ids the record holds, and is written whole instead
// of appended to before it outgrows the record (write).
func (s *seen) room(n int64) bool {
	return s.bytes+s.reserved+n <= s.limit
}

// drop ends key's flight: the post was not taken, and is kept nowhere.
func (s *seen) drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved -= s.inFlight[key]
	delete(s.inFlight, key)
}

// take records key as taken at now and returns once a write holding it
// is durable, or with that write's error: the id still counts (a repeat
// is refused while the listener runs, and the next write keeps it), but
// it was not kept on disk.
func (s *seen) take(key string, now time.Time) error {
	at := now.UTC().Truncate(time.Second)
	e, err := newKept(key, at)
	done := make(chan error, 1)
	s.mu.Lock()
	s.reserved -= s.inFlight[key]
	delete(s.inFlight, key)
	s.taken[key] = at
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.kept = append(s.kept, e)
	s.bytes += e.cost()
	s.pending = append(append(s.pending, e.json...), '\n')
	s.waiters = append(s.waiters, done)
	if !s.writing {
		s.writing = true
		go s.write()
	}
	s.mu.Unlock()
	return <-done
}

// write makes the ids of every taker waiting durable, again and again
// while more arrive, then ends. One runs at a time, and it alone writes
// either file.
func (s *seen) write() {
	for {
		s.mu.Lock()
		batch, lines := s.waiters, s.pending
		s.waiters, s.pending = nil, nil
		whole := s.compact || s.log.size+int64(len(lines)) > max(min(compactAt, s.limit), s.bytes)
		if len(batch) == 0 {
			s.writing = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.writes.Add(1)
		var err error
		switch {
		case s.broken:
			// The log may lack what a failed append held, or be another
			// file now: it is read again, and the record written whole.
			err = s.fold(time.Now(), true)
		case whole:
			err = s.writeWhole(time.Now())
		default:
			err = s.log.append(lines)
		}
		s.broken = err != nil
		for _, w := range batch {
			w <- err
		}
	}
}

// writeWhole prunes the ids 30 days old and writes the record whole,
// then empties the log (the writer alone, or openSeen).
func (s *seen) writeWhole(now time.Time) error {
	s.mu.Lock()
	s.prune(now)
	s.compact = false
	data := make([]byte, 0, s.bytes)
	data = append(data, '{')
	for i, e := range s.kept {
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, e.json...)
	}
	data = append(data, '}')
	s.mu.Unlock()
	if err := ownerfile.WriteAtomic(int(s.dir.Fd()), SeenName, data, ownerfile.Write{Mode: 0o600}); err != nil {
		return err
	}
	return s.log.empty()
}

// prune forgets the ids taken KeepSeen or more before now, reporting
// whether there were any (s.mu held). Every entry is looked at: the
// clock may have gone back between two.
func (s *seen) prune(now time.Time) bool {
	n := len(s.kept)
	s.kept = slices.DeleteFunc(s.kept, func(e keptID) bool {
		if now.Sub(e.at) < KeepSeen {
			return false
		}
		if s.taken[e.key].Equal(e.at) {
			delete(s.taken, e.key)
		}
		s.bytes -= e.cost()
		return true
	})
	return len(s.kept) < n
}

// close releases the log, then the lock.
func (s *seen) close() error {
	err := s.log.close()
	s.lock.Close()
	return err
}

// fullReason is ErrFull's refusal for agent's listener, with what frees
// room.
func fullReason(limit int64, agent string) string {
	return fmt.Sprintf("%v (%s of the ids taken in the last 30 days); a post is taken again once the oldest pass 30 days; hint: lnk agent webhook list %s shows its webhooks, and lnk agent webhook remove %s NAME stops one that posts this often", ErrFull, sizeOf(limit), agent, agent)
}

func sizeOf(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
