package model

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestKeyInProviderHeaderOnly: the key goes in the provider's own header
// (Authorization: Bearer; x-api-key with anthropic-version) and nowhere
// else: not the URL, not the body, not another header.
func TestKeyInProviderHeaderOnly(t *testing.T) {
	for _, c := range []struct {
		format, file, path, header, value string
	}{
		{FormatOpenAI, "openai/whole_text.http", "/v1/chat/completions", "Authorization", "Bearer " + testKey},
		{FormatAnthropic, "anthropic/whole_text.http", "/v1/messages", "X-Api-Key", testKey},
	} {
		t.Run(c.format, func(t *testing.T) {
			p := newProvider(t, loadRecorded(t, c.file))
			if _, err := mustNew(t, endpointFor(p, c.format)).Complete(context.Background(), aRequest(), nil); err != nil {
				t.Fatal(err)
			}
			got := p.requests()[0]
			if got.Method != "POST" || got.Path != c.path {
				t.Errorf("sent %s %s, want POST %s", got.Method, got.Path, c.path)
			}
			if v := got.Header.Get(c.header); v != c.value {
				t.Errorf("%s = %q, want %q", c.header, v, c.value)
			}
			for k, vs := range got.Header {
				if k == c.header {
					continue
				}
				for _, v := range vs {
					if strings.Contains(v, testKey) {
						t.Errorf("the key is in header %s too", k)
					}
				}
			}
			if strings.Contains(got.URL, testKey) || bytes.Contains(got.Body, []byte(testKey)) {
				t.Error("the key is in the URL or the body")
			}
			if c.format == FormatAnthropic && got.Header.Get("Anthropic-Version") != anthropicVersion {
				t.Errorf("anthropic-version = %q", got.Header.Get("Anthropic-Version"))
			}
		})
	}
}

// TestErrorNeverCarriesKey: a provider that echoes the key (whole, in
// its error's words, in a text body, in a stream's error, masked as
// OpenAI masks it) is answered with an Error whose message keeps its
// other words and holds no key.
func TestErrorNeverCarriesKey(t *testing.T) {
	for _, c := range []struct {
		name, format string
		ans          recorded
	}{
		{"openai json", FormatOpenAI, recorded{401, hdr("application/json"), []byte(`{"error":{"message":"bad key ` + testKey + ` given","type":"invalid_request_error","code":"invalid_api_key"}}`)}},
		{"anthropic json", FormatAnthropic, recorded{401, hdr("application/json"), []byte(`{"type":"error","error":{"type":"authentication_error","message":"bad key ` + testKey + ` given"}}`)}},
		{"text body", FormatOpenAI, recorded{502, hdr("text/plain"), []byte("bad key " + testKey + " given\n")}},
		{"split by a control", FormatOpenAI, recorded{401, hdr("text/plain"), []byte("bad key " + testKey[:9] + "\x1b" + testKey[9:] + " given")}},
		{"masked", FormatOpenAI, recorded{401, hdr("application/json"), []byte(`{"error":{"message":"bad key sk-proj-****abcd given","type":"invalid_request_error"}}`)}},
		{"bearer echoed", FormatOpenAI, recorded{400, hdr("application/json"), []byte(`{"error":{"message":"bad key Bearer abc.def given","type":"invalid_request_error"}}`)}},
		{"stream error", FormatAnthropic, recorded{200, hdr("text/event-stream"), []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"bad key " + testKey + " given\"}}\n\n")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t, c.ans)
			_, err := mustNew(t, endpointFor(p, c.format)).Complete(context.Background(), aRequest(), nil)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("got %v", err)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "Kq93x") || strings.Contains(err.Error(), "abcd") || strings.Contains(err.Error(), "abc.def") {
				t.Errorf("the key is in the error: %q", err.Error())
			}
			if !strings.Contains(me.Message, "bad key") || !strings.Contains(me.Message, "given") {
				t.Errorf("the provider's other words are gone: %q", me.Message)
			}
		})
	}
}

func hdr(ct string) map[string][]string { return map[string][]string{"Content-Type": {ct}} }
