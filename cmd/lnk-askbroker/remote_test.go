package main

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
)

var remoteQuestion = askbroker.Question{What: question.What, Sandbox: question.Sandbox, Agent: question.Agent, Call: question.Call, Allow: question.Allow}

// A question asked through the channel whose call is cancelled while the
// terminal shows it is withdrawn there (the terminal says so) and
// answered as withdrawn at once; the terminal then takes the next
// question, which its code allows.
func TestRemoteQuestionWithdrawnWhenItsCallIsCancelled(t *testing.T) {
	tty, tmux := startTmux(t)
	r := &askbroker.Remote{C: startBroker(t, tty)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asked, withdraw := context.WithCancel(ctx)
	type res struct {
		d   askbroker.Decision
		err error
	}
	got := make(chan res, 1)
	go func() {
		q := remoteQuestion
		d, err := r.Ask(asked, &q)
		got <- res{d, err}
	}()
	prompt := regexp.MustCompile(`Type ([a-z]{4}) to allow it once`)
	for first := []string(nil); first == nil; {
		if ctx.Err() != nil {
			t.Fatal("the terminal never showed the question")
		}
		first = prompt.FindStringSubmatch(tmux("capture-pane", "-p", "-J", "-t", "ask"))
		time.Sleep(20 * time.Millisecond)
	}
	withdraw()
	select {
	case g := <-got:
		if g.err != nil || g.d.Allow || g.d.By != "withdrawn" {
			t.Fatalf("a cancelled call's question: %+v, %v; want withdrawn", g.d, g.err)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled call's question was never withdrawn")
	}
	for !regexp.MustCompile(`withdrawn: the call that asked was cancelled`).MatchString(tmux("capture-pane", "-p", "-J", "-t", "ask")) {
		if ctx.Err() != nil {
			t.Fatal("the terminal never said the question was withdrawn")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The positive control: the terminal asks the next one, and its code
	// allows it.
	go func() {
		q := remoteQuestion
		d, err := r.Ask(ctx, &q)
		got <- res{d, err}
	}()
	var code string
	for code == "" {
		if ctx.Err() != nil {
			t.Fatal("the terminal never showed the next question")
		}
		// The withdrawn question's prompt is still above: the last one.
		if m := prompt.FindAllStringSubmatch(tmux("capture-pane", "-p", "-J", "-t", "ask"), -1); len(m) == 2 {
			code = m[1][1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	tmux("send-keys", "-t", "ask", "-l", code)
	tmux("send-keys", "-t", "ask", "Enter")
	if g := <-got; g.err != nil || !g.d.Allow || g.d.By != "terminal" {
		t.Fatalf("the next question: %+v, %v; want allowed on the terminal", g.d, g.err)
	}
}

// Refusals counted over the channel pause the sandbox's questions: before
// them a question is refused for want of a way to ask, after them for
// the pause.
func TestRemoteCountedRefusalsPauseTheSandbox(t *testing.T) {
	r := &askbroker.Remote{C: startBroker(t, nil)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q := remoteQuestion
	if _, err := r.Ask(ctx, &q); !errors.Is(err, askbroker.ErrNoWay) {
		t.Fatalf("before any refusal: %v, want no way to ask", err)
	}
	for range 10 {
		r.CountRefusal(remoteQuestion.Sandbox)
	}
	q = remoteQuestion
	d, err := r.Ask(ctx, &q)
	var ref *askbroker.Refusal
	if !errors.As(err, &ref) || !errors.Is(err, askbroker.ErrPaused) || d.Allow {
		t.Fatalf("after 10 refusals: %+v, %v; want paused", d, err)
	}
}
