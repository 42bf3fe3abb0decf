package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/prompt"
	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/harness/tools"
	"lnk.dev/lnk/services/harness/turn"
)

// Agent is one agent's harness: what its turns need, all its own.
type Agent struct {
	cfg    *config.Config
	dir    *os.File // the Agent/ folder
	chats  *store.Chats
	prompt *prompt.Source
	tools  *tools.Set
	runner *turn.Runner
	logf   func(string, ...any)

	// others are the runners of the models a subagent may run on beside
	// the agent's own ([model] allow), made at need.
	mu     sync.Mutex
	others map[string]*turn.Runner
	given  model.Client // Options.Model, when given

	ran       ranIndex      // which queued messages' events each conversation holds
	turnLimit time.Duration // a message from others' turn, at once or queued
}

// Options are what Open takes beyond the config.
type Options struct {
	Logf   func(format string, args ...any)
	Getenv func(string) string // $LNK_TOOL_ routes; nil: os.Getenv
	// Model, if not nil, is used instead of one made from the config.
	Model model.Client
	// Now, if not nil, is the clock the model's fallback keeps its 3
	// minutes by (tests); nil: the real one.
	Now func() time.Time
	// Socket, if not "", is a unix socket the endpoint also answers on
	// (endpoint.sock in the harness's home), for the agent's supervisor
	// to carry the machine's 127.0.0.1:port to.
	Socket string
	// TurnLimit, if not 0, is how long a message from others' turn runs
	// at most, taken at once or queued (tests); 0: endpoint.OthersTurnLimit.
	TurnLimit time.Duration
}

// Open opens agent c's folder and makes its parts.
func Open(c *config.Config, o Options) (a *Agent, err error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	a = &Agent{cfg: c, logf: o.Logf, turnLimit: o.TurnLimit}
	if a.turnLimit <= 0 {
		a.turnLimit = endpoint.OthersTurnLimit
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	fd, err := ownerfile.OpenPath(c.AgentDir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("agent %s's folder %s: %w", c.Name, c.AgentDir, err)
	}
	a.dir = os.NewFile(uintptr(fd), c.AgentDir)
	if err := ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
		return nil, fmt.Errorf("agent %s's folder %s: %w", c.Name, c.AgentDir, err)
	}
	if a.chats, err = store.OpenChats(a.dir); err != nil {
		return nil, fmt.Errorf("agent %s's chats: %w", c.Name, err)
	}
	if a.prompt, err = prompt.Open(a.dir, prompt.Options{Logf: o.Logf}); err != nil {
		return nil, fmt.Errorf("agent %s's prompt: %w", c.Name, err)
	}
	if a.tools, err = tools.New(tools.Config{AgentID: c.AgentID, Tools: tools.FromConfig(c.Tools, o.Getenv, o.Logf), Logf: o.Logf}); err != nil {
		return nil, fmt.Errorf("agent %s's tools: %w", c.Name, err)
	}
	m := o.Model
	a.given = o.Model
	if m == nil {
		if m, err = modelOf(c, o.Logf, o.Now); err != nil {
			return nil, err
		}
	}
	if a.runner, err = turn.New(turn.Config{Model: m, ModelName: c.Model.Model, Tools: a.tools, Prompt: a.prompt, Logf: o.Logf}); err != nil {
		return nil, err
	}
	return a, nil
}

// modelOf is the config's model, with its fallback when it names one.
func modelOf(c *config.Config, logf func(string, ...any), now func() time.Time) (model.Client, error) {
	m, err := model.New(model.Endpoint{Format: c.Model.Format, BaseURL: c.Model.BaseURL, Key: c.Model.Key, Model: c.Model.Model})
	if err != nil {
		return nil, fmt.Errorf("agent %s's model: %w", c.Name, err)
	}
	if c.Fallback == nil {
		return m, nil
	}
	fb, err := model.New(model.Endpoint{Format: c.Fallback.Format, BaseURL: c.Fallback.BaseURL, Key: c.Fallback.Key, Model: c.Fallback.Model})
	if err != nil {
		return nil, fmt.Errorf("agent %s's fallback model: %w", c.Name, err)
	}
	return model.WithFallback(m, fb, model.FallbackOptions{Logf: logf, Now: now}), nil
}

// Endpoint is the agent as the endpoint answers for it. A config with
// no key gives an agent with none: every request 503.
func (a *Agent) Endpoint() endpoint.Agent {
	key, err := a.cfg.KeyBytes()
	if err != nil {
		a.logf("lnk-harness: agent %s: %v", a.cfg.Name, err)
		key = nil
	}
	return endpoint.Agent{ID: a.cfg.AgentID, Owner: a.cfg.Owner, Name: a.cfg.Name, Key: key, Turn: a, Taken: a.taken,
		Queue: a.queue, RunQueued: a.runQueued, Waiting: a.waiting, Has: a.chats.Has, TurnLimit: a.turnLimit}
}

// taken says whether thread holds a message from from already, for a
// sender who speaks once: a background command's ending (run:<id>), so
// one handed again after its deliverer died midway is not a second turn.
// Every other sender may speak again. It asks the queued check's index
// (ranIndex), which reads only what was written since its last look.
func (a *Agent) taken(thread, from string) (bool, error) {
	if !speaksOnce(from) {
		return false, nil
	}
	conv, err := a.chats.Open(thread, a.storeOptions())
	if err != nil {
		return false, err
	}
	defer conv.Close()
	return a.ran.spoke(conv, thread, from)
}

// Turn runs one message's turn in its conversation, opened for it and
// closed after (the endpoint runs one turn per thread at a time).
func (a *Agent) Turn(ctx context.Context, m endpoint.Message, onText func(string)) (int64, error) {
	return a.turn(ctx, m, toolsFor(m.From, a.cfg.Strangers), 0, onText)
}

// turn runs m with tools (nil: every tool), narrowed again by a
// subagent's list; queued is its inbox number (0: not queued).
func (a *Agent) turn(ctx context.Context, m endpoint.Message, tools []string, queued int64, onText func(string)) (int64, error) {
	// A refusal is logged once, by the endpoint, as the turn's failure.
	// A subagent's start is checked before its conversation is opened:
	// opening makes the folder, which would then count as kept.
	if err := a.checkSubagentStart(m); err != nil {
		return 0, err
	}
	conv, err := a.chats.Open(m.Thread, a.storeOptions())
	if err != nil {
		return 0, err
	}
	defer conv.Close()
	sub, err := a.subagentScope(conv, m)
	if err != nil {
		return 0, err
	}
	runner := a.runner
	if sub != nil {
		if runner, err = a.runnerFor(sub.Model); err != nil {
			return 0, err
		}
	}
	ans, err := runner.Turn(ctx, conv, m.Thread, turn.Incoming{Text: m.Text, From: m.From, Hops: m.Hops, Tools: narrowTools(tools, sub), Queued: queued}, onText)
	if err != nil {
		return 0, err
	}
	return ans.Seq, nil
}

// storeOptions is how the agent's conversations are opened.
func (a *Agent) storeOptions() store.Options {
	return store.Options{Compact: a.cfg.Storage.Conversations == "compact", Agent: a.cfg.Name, Logf: a.logf}
}

// runnerFor is the runner of model name: the agent's own for "" or its
// own name; else one on the same endpoint under that name, made once
// (checkSubagentModel has allowed it: [model] allow).
func (a *Agent) runnerFor(name string) (*turn.Runner, error) {
	if name == "" || name == a.cfg.Model.Model {
		return a.runner, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.others[name]; r != nil {
		return r, nil
	}
	m := a.given
	if m == nil {
		var err error
		if m, err = model.New(model.Endpoint{Format: a.cfg.Model.Format, BaseURL: a.cfg.Model.BaseURL, Key: a.cfg.Model.Key, Model: name}); err != nil {
			return nil, fmt.Errorf("agent %s's model %s: %w", a.cfg.Name, name, err)
		}
	}
	r, err := turn.New(turn.Config{Model: m, ModelName: name, Tools: a.tools, Prompt: a.prompt, Logf: a.logf})
	if err != nil {
		return nil, err
	}
	if a.others == nil {
		a.others = map[string]*turn.Runner{}
	}
	a.others[name] = r
	return r, nil
}

// Close ends the agent's tools' sessions and closes its folders.
func (a *Agent) Close() error {
	var errs []error
	if a.tools != nil {
		errs = append(errs, a.tools.Close())
	}
	if a.prompt != nil {
		errs = append(errs, a.prompt.Close())
	}
	if a.chats != nil {
		errs = append(errs, a.chats.Close())
	}
	if a.dir != nil {
		errs = append(errs, a.dir.Close())
	}
	return errors.Join(errs...)
}
