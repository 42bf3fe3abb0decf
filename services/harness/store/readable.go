package store

// openReadable opens conversation.md for appending, writing it anew from
// the events when it is empty and the conversation is not.
func (v *Conversation) openReadable() error { return nil }

// appendReadable adds e's readable form to conversation.md.
func (v *Conversation) appendReadable(e *Event) {}
