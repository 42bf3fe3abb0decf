package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/harness/builtin"
)

// lnk agent start's model for Link Harness: agent.toml's [model], set by
// --model builtin|FORMAT:URL:MODEL, else Link's built-in model, which
// start makes sure runs (lnk model builtin on a free loopback port,
// recorded in ~/.lnk/models/builtin.json, started in a session of its
// own outside every sandbox when none answers) and records as the
// agent's [model] base_url, so the agent's proxy serves it as a local
// model: inference only, its admin API 403.

// builtinWait bounds how long start waits for the built-in it started to
// answer.
const builtinWait = 10 * time.Second

// setModel records --model and --fallback (either "" when not given) in
// agent.toml: a new model keeps the fallback, a new fallback the model
// (the built-in when there was none).
func setModel(home, name, model, fallback string) (*caps.Agent, error) {
	var m, fb *caps.AgentModel
	var err error
	if model != "" {
		if m, err = caps.ParseModelFlag(model); err != nil {
			return nil, Usage(err.Error(), "lnk agent start "+name+" --model builtin", "lnk agent start "+name+" --model openai:http://127.0.0.1:11434/v1:llama3.2")
		}
	}
	if fallback != "" {
		if fb, err = caps.ParseFallbackFlag(fallback); err != nil {
			return nil, Usage(err.Error(), "lnk agent start "+name+" --fallback anthropic:https://api.anthropic.com/v1:claude-sonnet-4-5", "lnk agent start "+name+" --fallback none removes it")
		}
	}
	a, err := caps.UpdateAgent(home, name, func(a *caps.Agent) error {
		if m == nil {
			m = a.Model
			if m == nil {
				m = &caps.AgentModel{Format: caps.ModelBuiltin}
			}
		} else if a.Model != nil {
			m.Fallback = a.Model.Fallback
		}
		if fallback != "" {
			m.Fallback = fb
		}
		a.Model = m
		return a.Model.Check()
	})
	if err != nil {
		return nil, agentErr(err, name)
	}
	return a, nil
}

// ensureModel makes sure Link Harness's model for a is there: for the
// built-in, one running and its address in agent.toml.
func ensureModel(ctx context.Context, home string, a *caps.Agent) (*caps.Agent, error) {
	if !a.RunsLinkHarness() || (a.Model != nil && a.Model.Format != caps.ModelBuiltin) {
		return a, nil
	}
	url, err := ensureBuiltin(ctx, home)
	if err != nil {
		return nil, Fail(ExitFailure, fmt.Errorf("Link's built-in model for agent %s: %w", a.Name, err), "lnk model builtin serves it; lnk agent start "+a.Name+" --model FORMAT:URL:MODEL names another")
	}
	if a.Model != nil && a.Model.BaseURL == url {
		return a, nil
	}
	return caps.UpdateAgent(home, a.Name, func(a *caps.Agent) error {
		m := &caps.AgentModel{Format: caps.ModelBuiltin, BaseURL: url}
		if a.Model != nil {
			m.Fallback = a.Model.Fallback
		}
		a.Model = m
		return nil
	})
}

// ensureBuiltin is the base URL of the built-in model running, started
// when none answers. One in --obedient mode (a hijacked model, for
// tests) is never taken as an agent's default: a plain one is started.
func ensureBuiltin(ctx context.Context, home string) (string, error) {
	if r, err := builtin.ReadRecord(home); err == nil && !r.Obedient && builtinAnswers(ctx, r.URL) {
		return r.URL, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOENT) {
		return "", err
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer null.Close()
	cmd := exec.Command(self, "model", "builtin", "--port", "0")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	pid := cmd.Process.Pid
	go cmd.Wait() // reaped should it end while lnk still runs
	for end := time.Now().Add(builtinWait); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if r, err := builtin.ReadRecord(home); err == nil && r.PID == pid && builtinAnswers(ctx, r.URL) {
			return r.URL, nil
		}
	}
	cmd.Process.Kill()
	return "", fmt.Errorf("the built-in model it started did not answer within %s", builtinWait)
}

// builtinAnswers says whether the built-in answers at url.
func builtinAnswers(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/models", nil)
	if err != nil {
		return false
	}
	t := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	resp, err := (&http.Client{Transport: t}).Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
