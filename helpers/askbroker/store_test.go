package askbroker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// testStore is a store in a fresh folder standing for HOME; it sets no
// environment, so tests using it may run in parallel.
func testStore(t *testing.T) (*Store, string) {
	t.Helper()
	home := t.TempDir()
	s, err := OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, filepath.Join(home, ".lnk", "questions")
}

func sampleQuestion() *Question {
	q := &Question{What: "mcp call", Sandbox: "work", Agent: "ann", Call: "tools/call delete_repo", Allow: "lnk agent allow --tool gh --allow delete_repo"}
	q.Clean()
	return q
}

func TestStoreFirstAnswerIsFinal(t *testing.T) {
	s, dir := testStore(t)
	id, err := s.Put(sampleQuestion(), time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{dir, filepath.Join(dir, id+".q")} {
		st, err := os.Lstat(name)
		if err != nil || st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, %v; want the owner's alone", name, st.Mode(), err)
		}
	}
	ws, err := s.List()
	if err != nil || len(ws) != 1 || ws[0].ID != id || ws[0].Call != "tools/call delete_repo" {
		t.Fatalf("List = %+v, %v", ws, err)
	}
	if err := s.Answer(id, Answer{Allow: false, By: "store"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Answer(id, Answer{Allow: true, By: "store"}); !errors.Is(err, ErrAnswered) {
		t.Fatalf("second answer: %v, want ErrAnswered", err)
	}
	if a, ok, err := s.ReadAnswer(id); err != nil || !ok || a.Allow {
		t.Fatalf("answer = %+v %v %v, want the first (no)", a, ok, err)
	}
	if ws, _ := s.List(); len(ws) != 0 {
		t.Errorf("an answered question is still listed: %+v", ws)
	}
	s.Remove(id)
	if err := s.Answer(id, Answer{Allow: true}); !errors.Is(err, ErrAnswered) {
		t.Errorf("answer to a decided, removed question: %v, want ErrAnswered", err)
	}
	if err := s.Answer("aaaaaaaaaaaaaaaa", Answer{Allow: true}); !errors.Is(err, ErrNoQuestion) {
		t.Errorf("answer to no question: %v, want ErrNoQuestion", err)
	}
	if err := s.Answer("../../etc/passwd", Answer{Allow: true}); !errors.Is(err, ErrNoQuestion) {
		t.Errorf("answer to a path: %v, want ErrNoQuestion", err)
	}
}

func TestStoreFolderThatIsALinkIsRefused(t *testing.T) {
	home := testenv.Home(t)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(home, ".lnk")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(home); !errors.Is(err, ErrLink) {
		t.Fatalf("OpenStore with ~/.lnk a link: %v, want ErrLink", err)
	}
	os.Remove(filepath.Join(home, ".lnk"))
	os.Mkdir(filepath.Join(home, ".lnk"), 0o700)
	os.Symlink(elsewhere, filepath.Join(home, ".lnk", "questions"))
	if _, err := OpenStore(home); !errors.Is(err, ErrLink) {
		t.Fatalf("OpenStore with questions a link: %v, want ErrLink", err)
	}
	os.Remove(filepath.Join(home, ".lnk", "questions"))
	os.Mkdir(filepath.Join(home, ".lnk", "questions"), 0o755)
	if _, err := OpenStore(home); !errors.Is(err, ErrNotPrivate) {
		t.Fatalf("OpenStore with questions 0755: %v, want ErrNotPrivate", err)
	}
}

func TestQuestionFileThatIsALinkIsRefused(t *testing.T) {
	s, dir := testStore(t)
	id, err := s.Put(sampleQuestion(), time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(t.TempDir(), "real.q")
	b, _ := os.ReadFile(filepath.Join(dir, id+".q"))
	os.WriteFile(real, b, 0o600)
	os.Remove(filepath.Join(dir, id+".q"))
	if err := os.Symlink(real, filepath.Join(dir, id+".q")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(id); !errors.Is(err, ErrLink) {
		t.Errorf("Read of a linked question: %v, want ErrLink", err)
	}
	if err := s.Answer(id, Answer{Allow: true}); !errors.Is(err, ErrLink) {
		t.Errorf("Answer to a linked question: %v, want ErrLink", err)
	}
	if ws, _ := s.List(); len(ws) != 0 {
		t.Errorf("a linked question is listed: %+v", ws)
	}
	os.Symlink(real, filepath.Join(dir, lockName))
	if _, err := s.Answering(); !errors.Is(err, ErrLink) {
		t.Errorf("a linked lock file: %v, want ErrLink", err)
	}
}

func TestAnsweringLock(t *testing.T) {
	s, _ := testStore(t)
	if s.SomeoneAnswering() {
		t.Fatal("someone answering in a fresh store")
	}
	release, err := s.Answering()
	if err != nil {
		t.Fatal(err)
	}
	release2, _ := s.Answering()
	if !s.SomeoneAnswering() {
		t.Fatal("no one answering while two hold the lock")
	}
	release()
	if !s.SomeoneAnswering() {
		t.Fatal("no one answering while one holds the lock")
	}
	release2()
	if s.SomeoneAnswering() {
		t.Fatal("someone answering after both let go")
	}
}

// Two answers racing, from the store and a terminal: exactly one wins,
// every time.
func TestRacingAnswersExactlyOneWins(t *testing.T) {
	t.Parallel()
	s, _ := testStore(t)
	for i := 0; i < 1000; i++ {
		id, err := s.Put(sampleQuestion(), time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, a := range []Answer{{Allow: true, By: "store"}, {Allow: false, By: "terminal"}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := s.Answer(id, a)
				if err == nil {
					wins.Add(1)
				} else if !errors.Is(err, ErrAnswered) {
					t.Errorf("answer: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("run %d: %d answers won, want exactly one", i, wins.Load())
		}
		s.Remove(id)
	}
}

func TestStoreWaitWakesOnAnswer(t *testing.T) {
	t.Parallel()
	s, _ := testStore(t)
	const n = 200
	ids := make([]string, n)
	for i := range ids {
		id, err := s.Put(sampleQuestion(), time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	got := make([]Answer, n)
	for i, id := range ids {
		wg.Add(2)
		go func() {
			defer wg.Done()
			a, err := s.Wait(ctx, id)
			if err != nil {
				t.Errorf("wait %s: %v", id, err)
			}
			got[i] = a
		}()
		go func() {
			defer wg.Done()
			if err := s.Answer(id, Answer{Allow: i%2 == 0, By: "store"}); err != nil {
				t.Errorf("answer %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	for i, a := range got {
		if a.Allow != (i%2 == 0) || a.By != "store" {
			t.Fatalf("question %d got %+v: an answer lost or crossed", i, a)
		}
	}
}
