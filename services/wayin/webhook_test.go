package wayin

import (
	"context"
	"strings"
	"testing"

	"lnk.dev/lnk/services/webhook"
)

// The way in is a webhook.Deliverer.
var _ webhook.Deliverer = (*Server)(nil)

// TestWebhookDeliver: a webhook's post handed as webhook.Deliverer
// reaches the harness as the stranger, in its own conversation; one for
// another agent, or for another conversation, is refused.
func TestWebhookDeliver(t *testing.T) {
	w := newWorld(t, defaults, false)
	var d webhook.Deliverer = w.srv
	if err := d.Deliver(context.Background(), "ffffffffffffffffffffffffffffffff", webhook.From("gh"), webhook.Thread("gh"), "a post"); err == nil {
		t.Fatal("a post for another agent was taken")
	}
	if err := d.Deliver(context.Background(), testID, webhook.From("gh"), "main", "a post"); err == nil || !strings.Contains(err.Error(), "only to its own conversation") {
		t.Fatalf("a post into the owner's conversation: %v", err)
	}
	if err := d.Deliver(context.Background(), testID, webhook.From("gh"), webhook.Thread("gh"), "a post"); err != nil {
		t.Fatalf("the post: %v", err)
	}
	w.waitAnswered(webhook.Thread("gh"), 1)
	if w.messagesFrom(webhook.Thread("gh"), webhook.From("gh")) != 1 {
		t.Fatal("the post was not kept once as the stranger's")
	}
}
