package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Resuming an answer's event stream the server closed before answering
// (streamable HTTP's resumability, SEP-1699): after the server's retry
// (defaultRetry if it gave none), a GET with the last event's id; given
// up after maxResumes in a row that brought no new event, after
// maxResumesInAll in all (a server sending a fresh id each time would
// otherwise keep the call resuming for ever), and once the call's own
// time (Client.CallTime) is over.
const (
	defaultRetry    = time.Second
	maxResumes      = 5
	maxResumesInAll = 50
)

// stream is what an answer's event stream told of itself: whether it
// held the answer awaited, the last event's id (where to resume it
// from) and the wait the server asked before a client reconnects.
type stream struct {
	answered bool
	lastID   string
	retry    time.Duration
}

// copyEvents writes each server-sent event's data as a line, until the
// stream ends or holds the answer to the request id ("" for none
// awaited), and says what it learnt of the stream. An event without data
// (a priming event, its id and retry alone) writes nothing. Each event's
// data is capped at MaxMessage (the stream as a whole is not: it is
// bounded by the call's time). An event the stream ends inside, with no
// blank line after it, is dropped, its id too, as the SSE spec says.
func copyEvents(r io.Reader, w io.Writer, id string) (stream, error) {
	var st stream
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxMessage+len("data: ")+1)
	var data bytes.Buffer
	pendingID, hasID := "", false
	flush := func() error {
		if hasID {
			st.lastID, hasID = pendingID, false
		}
		b := bytes.TrimSpace(bytes.ReplaceAll(data.Bytes(), []byte("\n"), nil))
		data.Reset()
		if len(b) == 0 {
			return nil
		}
		if id != "" && isAnswer(b) && idOf(b) == id {
			st.answered = true
		}
		_, err := w.Write(append(b, '\n'))
		return err
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if err := flush(); err != nil || st.answered {
				return st, err
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if data.Len()+len(value) > MaxMessage {
				return st, errors.New("an event over 8 MB in the server's answer stream")
			}
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.ContainsRune(value, 0) {
				pendingID, hasID = value, true
			}
		case "retry":
			if ms, err := strconv.ParseUint(value, 10, 31); err == nil {
				st.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return st, errors.New("a line over 8 MB in the server's answer stream")
		}
		return st, err
	}
	return st, nil // an event not ended by a blank line is dropped
}

// resume reads on, from a GET with Last-Event-ID, an answer's event
// stream the server closed before answering request id, as streamable
// HTTP's resumability has it: after the server's retry, again from the
// last event each time it ends, until the answer comes. One that can't
// be resumed (no event id) is an error, so the request is answered,
// never left waiting.
//
// It stops, with an error saying why, after maxResumes in a row that
// brought no new event, after maxResumesInAll in all, and when ctx ends:
// the call cancelled (notifications/cancelled) or its time over.
func (c *Client) resume(ctx context.Context, st stream, id string, w io.Writer) error {
	for idle, all := 0, 0; ; {
		if st.lastID == "" {
			return errors.New("the server ended its answer's stream before answering, with no event id to resume it from")
		}
		if idle++; idle > maxResumes {
			return fmt.Errorf("the server's answer's stream brought no new event in %d resumptions", maxResumes)
		}
		if all++; all > maxResumesInAll {
			return fmt.Errorf("the server's answer's stream was resumed %d times without its answer: given up", maxResumesInAll)
		}
		if err := context.Cause(ctx); err != nil {
			return err
		}
		wait := st.retry
		if wait <= 0 {
			wait = defaultRetry
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
		req, err := c.request(ctx, http.MethodGet, nil)
		if err != nil {
			return err
		}
		req.Header.Del("Content-Type")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Last-Event-ID", st.lastID)
		resp, err := c.HTTP.Do(req)
		if err != nil {
			if cause := context.Cause(ctx); cause != nil {
				return cause
			}
			return errors.New("the server could not be reached to resume its answer: " + scrub(err.Error(), c.URL))
		}
		switch {
		case resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "":
			resp.Body.Close()
			return ErrSessionGone
		case resp.StatusCode/100 != 2 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			return fmt.Errorf("resuming its answer's stream, the server answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
		}
		next, err := copyEvents(resp.Body, w, id)
		resp.Body.Close()
		if cause := context.Cause(ctx); err != nil && cause != nil {
			return cause
		}
		if err != nil || next.answered {
			return err
		}
		if next.lastID != "" && next.lastID != st.lastID {
			idle = 0
			st.lastID = next.lastID
		}
		if next.retry > 0 {
			st.retry = next.retry
		}
	}
}
