package runtool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/ownerfile"
)

// Hand hands a background command's ending to the agent, as a message
// from e.From in e.Thread at e.Hops, through its way in (services/
// wayin's Caller). It returns once the agent's harness took it; again
// says the harness had taken it before (a delivery cut short after the
// harness took it and before it was marked told).
type Hand func(ctx context.Context, e Ending, text string) (again bool, err error)

// EndingText is what the agent reads of an ending (quoted by the harness,
// as from run:<id>): how it ended and where its output is. Nothing of
// the command's own words: they are in its output file.
func EndingText(id string, e Ending) string {
	t := fmt.Sprintf("Background command %s ended (%s, exit status %d) at %s.\nIts output, %d bytes, is %s in the files folder",
		id, e.Reason, e.Code, e.Ended.UTC().Format(time.RFC3339), e.Bytes, e.Output)
	if e.Cut {
		t += " (cut at [tool.run] background_output)"
	}
	return t + "."
}

// ParseEnding reads an ending strictly.
func ParseEnding(b []byte) (*Ending, error) {
	var e Ending
	if err := decodeStrict(b, &e); err != nil {
		return nil, fmt.Errorf("an ending: %w", err)
	}
	if e.Hops < 1 || e.Thread == "" {
		return nil, errors.New("an ending names no conversation, or fewer than one hop")
	}
	return &e, nil
}

// DeliverEndings hands each ending not yet told to the agent, once:
// each is marked told (its file removed) only after the harness took it,
// and a second hand of one the harness took already (the deliverer cut
// short between the two) is answered again and marked told, never a
// second turn. An ending the way in refused, or that couldn't reach it,
// stays for the next delivery, but for one whose conversation is gone
// (conversation.ErrMissing), which is marked told and said dropped. It
// returns the errors met, joined.
func (a *Agent) DeliverEndings(ctx context.Context, hand Hand) error {
	if !a.hasStore() {
		return nil
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	ids, err := s.ids()
	if err != nil {
		s.Close()
		return err
	}
	var pending []string
	for _, id := range ids {
		if _, err := ownerfile.ReadFile(s.fd(), endingName(id), ownerfile.Private, maxRecord); err == nil {
			pending = append(pending, id)
		} else if !errors.Is(err, os.ErrNotExist) {
			s.Close()
			return fmt.Errorf("background command %s's ending: %w", id, err)
		}
	}
	var errs []error
	for _, id := range pending {
		b, err := ownerfile.ReadFile(s.fd(), endingName(id), ownerfile.Private, maxRecord)
		if errors.Is(err, os.ErrNotExist) {
			continue // another deliverer told it meanwhile
		}
		var e *Ending
		if err == nil {
			e, err = ParseEnding(b)
		}
		if err == nil && e.From != "run:"+id {
			err = fmt.Errorf("it names %q, not run:%s", e.From, id)
		}
		if err == nil {
			_, err = hand(ctx, *e, EndingText(id, *e))
			if errors.Is(err, conversation.ErrMissing) {
				// Its conversation is gone (the owner deleted it): every
				// delivery would be refused the same, so it is told as
				// dropped, once, never tried again at each start.
				if merr := a.MarkTold(id); merr != nil {
					err = errors.Join(err, merr)
				}
				errs = append(errs, fmt.Errorf("background command %s's ending dropped: %w", id, err))
				continue
			}
		}
		if err == nil {
			err = a.MarkTold(id)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("background command %s's ending: %w", id, err))
		}
	}
	s.Close()
	return errors.Join(errs...)
}
