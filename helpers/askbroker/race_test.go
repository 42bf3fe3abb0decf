package askbroker

import (
	"errors"
	"regexp"
	"testing"
	"time"
)

// Two answers racing for one question, the owner's code typed on the
// terminal and a no written to the store at the same moment: exactly one
// wins, every time, and the decision is the winner's.
func TestStoreAndTerminalRaceExactlyOneWins(t *testing.T) {
	s, _ := testStore(t)
	master, tty := openPTY(t)
	term, err := NewTerminal(tty)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	b, err := New(Config{Store: s, Terminal: term, Wait: 5 * time.Minute, Limits: Limits{PerMinute: 1 << 30, PauseAfter: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	asked := promptsWithCode(master)
	wins := map[string]int{}
	for i := 0; i < 1000; i++ {
		c := askAsync(b, sampleQuestion())
		var p prompt
		select {
		case p = <-asked:
		case <-time.After(60 * time.Second):
			t.Fatalf("run %d: the terminal never asked", i)
		}
		storeErr := make(chan error, 1)
		start := make(chan struct{})
		go func() { <-start; storeErr <- s.Answer(p.id, Answer{Allow: false, By: "store"}) }()
		typed := make(chan struct{})
		go func() { <-start; master.Write([]byte(p.code + "\n")); close(typed) }()
		close(start)
		r := waitResult(t, c)
		serr := <-storeErr
		<-typed // so the code lands before the next question's flush
		switch {
		case serr == nil && r.d.By == "store" && !r.d.Allow:
		case errors.Is(serr, ErrAnswered) && r.d.By == "terminal" && r.d.Allow:
		default:
			t.Fatalf("run %d: the store's answer gave %v and the decision is %+v: not exactly one winner", i, serr, r.d)
		}
		wins[r.d.By]++
	}
	t.Logf("wins over 1000 runs: %v", wins)
}

type prompt struct{ id, code string }

// promptsWithCode reads the terminal's output and sends each question's
// id and code as it is asked.
func promptsWithCode(master interface{ Read([]byte) (int, error) }) chan prompt {
	c := make(chan prompt, 16)
	re := regexp.MustCompile(`\[lnk question ([a-z2-7]{16})\][^\[]*Type ([a-z]{4}) to allow it once`)
	go func() {
		var buf []byte
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			if err != nil {
				close(c)
				return
			}
			buf = append(buf, b[:n]...)
			for {
				loc := re.FindSubmatchIndex(buf)
				if loc == nil {
					break
				}
				c <- prompt{string(buf[loc[2]:loc[3]]), string(buf[loc[4]:loc[5]])}
				buf = buf[loc[1]:]
			}
		}
	}()
	return c
}
