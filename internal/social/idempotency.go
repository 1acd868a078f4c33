package social

import "time"

// ClaimState is what claiming an idempotency key found.
type ClaimState int

const (
	// Claimed: the key is new (or its record ended); this execution owns
	// it and settles it: its answer saved, or the key released.
	Claimed ClaimState = iota
	// Done: the key's first execution ended; Answer is its answer.
	Done
	// Pending: the key's first execution has not ended yet.
	Pending
	// Mismatch: the key was used for another request.
	Mismatch
)

// KeyClaim is the outcome of claiming a mutation's idempotency key.
type KeyClaim struct {
	State ClaimState
	// Answer is the stored answer (response JSON) of a Done key.
	Answer []byte
	// Left is how long a Pending key stays claimed at most.
	Left time.Duration
	// Token identifies a Claimed key's owner when it is settled.
	Token string
}
