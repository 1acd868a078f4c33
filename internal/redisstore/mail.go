package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// MailService keeps what account e-mails need (auth.MailStore): the mail
// queue, e-mail tokens (hashes only), the addresses reserved by pending
// e-mail changes, and password writes.
//
// An address change runs as single-slot steps (docs/data-model.md,
// "Cross-slot steps"): ReserveEmail ({acct}) when it is asked for;
// ClaimEmail ({acct}) maps the new address to the user, then ConfirmEmail
// (the user's slot) spends the token and writes the profile, then
// ReleaseEmail ({acct}) frees the old address. A crash after the claim
// leaves both addresses leading to the account and the token unspent: the
// same token, presented again, finishes the change.
type MailService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings // the profile cache, dropped what the service writes
	// queueLen bounds the mail stream (about; XADD MAXLEN ~).
	queueLen int64
}

// NewMailService returns the mail service over db's client and keys.
func NewMailService(db *DB) *MailService {
	return &MailService{rdb: db.rdb, keys: db.keys, set: db.set, queueLen: 100000}
}

// QueueMail adds an account e-mail job to the mail queue, which the
// fan-out workers carry out (auth.Mailer).
func (s *MailService) QueueMail(ctx context.Context, job map[string]string) error {
	err := s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.keys.MailQueue(), MaxLen: s.queueLen, Approx: true, Values: job}).Err()
	if err != nil {
		return fmt.Errorf("queue %s e-mail: %w", job["kind"], err)
	}
	return nil
}

// MailQueue names the mail queue for its workers.
func (s *MailService) MailQueue() (stream, dead, alive string) {
	return s.keys.MailQueue(), s.keys.MailDead(), s.keys.MailAlive()
}

// Client is the Redis client the service uses (its workers share it).
func (s *MailService) Client() redis.UniversalClient { return s.rdb }

// SaveMailToken stores the hash of userID's new token of a purpose,
// replacing the previous one; the key expires with the token.
func (s *MailService) SaveMailToken(ctx context.Context, purpose, userID string, t social.MailToken) error {
	k := s.keys.MailToken(userID, purpose)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, k)
		p.HSet(ctx, k, "h", t.Hash, "x", t.Expires.UnixMilli(), "e", t.Email)
		p.PExpireAt(ctx, k, t.Expires)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store %s token of %s: %w", purpose, userID, err)
	}
	return nil
}

// MailToken returns userID's pending token of a purpose; false when there
// is none.
func (s *MailService) MailToken(ctx context.Context, purpose, userID string) (social.MailToken, bool, error) {
	v, err := s.rdb.HMGet(ctx, s.keys.MailToken(userID, purpose), "h", "x", "e").Result()
	if err != nil {
		return social.MailToken{}, false, fmt.Errorf("load %s token of %s: %w", purpose, userID, err)
	}
	h, _ := v[0].(string)
	x, _ := v[1].(string)
	e, _ := v[2].(string)
	if h == "" {
		return social.MailToken{}, false, nil
	}
	ms, _ := strconv.ParseInt(x, 10, 64)
	return social.MailToken{Hash: h, Email: e, Expires: time.UnixMilli(ms)}, true, nil
}

// ResetPassword spends userID's reset token of hash tokenHash, if it is
// pending and not expired at now, and sets the password hash in the same
// step; false when the token does not hold.
func (s *MailService) ResetPassword(ctx context.Context, userID, tokenHash, passwordHash string, now time.Time) (bool, error) {
	n, err := mailResetScript.Run(ctx, s.rdb, []string{s.keys.MailToken(userID, social.TokenReset), s.keys.User(userID)},
		tokenHash, now.UnixMilli(), passwordHash).Int()
	s.set.profiles.Invalidate(s.keys.User(userID))
	if err != nil {
		return false, fmt.Errorf("reset password of %s: %w", userID, err)
	}
	return n == 1, nil
}

// ConfirmEmail spends userID's confirmation token of hash tokenHash for
// email, if it holds at now, and makes email the profile's verified
// address in the same step. It returns the previous address; false when
// the token does not hold.
func (s *MailService) ConfirmEmail(ctx context.Context, userID, tokenHash, email string, now time.Time) (string, bool, error) {
	old, err := mailConfirmScript.Run(ctx, s.rdb, []string{s.keys.MailToken(userID, social.TokenVerify), s.keys.User(userID)},
		tokenHash, now.UnixMilli(), email).Text()
	s.set.profiles.Invalidate(s.keys.User(userID))
	if isNil(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("confirm e-mail of %s: %w", userID, err)
	}
	return old, true, nil
}

// ReserveEmail reserves email for userID's pending change until until,
// ending any earlier reservation of the user: CONFLICT when another
// account has the address or a pending change to it.
func (s *MailService) ReserveEmail(ctx context.Context, userID, email string, until time.Time) error {
	res, err := emailReserveScript.Run(ctx, s.rdb, []string{s.keys.Emails(), s.keys.EmailPending()},
		userID, strings.ToLower(email), until.UnixMilli()).Text()
	if err != nil {
		return fmt.Errorf("reserve e-mail for %s: %w", userID, err)
	}
	switch res {
	case "OK":
		return nil
	case "OWN":
		return social.Errorf(social.BadUserInput, "that is already the account's e-mail address")
	}
	return social.Errorf(social.Conflict, "the e-mail address is already registered")
}

// ClaimEmail makes the address reserved for userID (or already its own)
// the user's in the e-mail index; false when the reservation ended and
// the address is no longer free for it.
func (s *MailService) ClaimEmail(ctx context.Context, userID, email string) (bool, error) {
	return s.settle(ctx, userID, strings.ToLower(email), "claim", "")
}

// ReleaseEmail frees an address userID owns in the e-mail index (its old
// address once a change is confirmed).
func (s *MailService) ReleaseEmail(ctx context.Context, userID, email string) error {
	_, err := s.settle(ctx, userID, strings.ToLower(email), "release", "")
	return err
}

func (s *MailService) settle(ctx context.Context, userID, email, mode, when string) (bool, error) {
	n, err := emailSettleScript.Run(ctx, s.rdb, []string{s.keys.Emails(), s.keys.EmailPending()}, userID, email, mode, when).Int()
	if err != nil {
		return false, fmt.Errorf("%s e-mail of %s: %w", mode, userID, err)
	}
	return n == 1, nil
}

// SetPassword replaces userID's password hash: NOT_FOUND for an account
// that is gone.
func (s *MailService) SetPassword(ctx context.Context, userID, passwordHash string) error {
	n, err := updateIfExistsScript.Run(ctx, s.rdb, []string{s.keys.User(userID)}, profileRecord.name("pw"), passwordHash).Int()
	s.set.profiles.Invalidate(s.keys.User(userID))
	if err != nil {
		return fmt.Errorf("set password of %s: %w", userID, err)
	}
	if n == 0 {
		return social.Errorf(social.NotFound, "user %s not found", userID)
	}
	return nil
}

// UserIDByEmail resolves an address (case-insensitive) to its account:
// NOT_FOUND when none has it (an address reserved by a pending change is
// no account's yet).
func (s *MailService) UserIDByEmail(ctx context.Context, email string) (string, error) {
	id, err := s.rdb.HGet(ctx, s.keys.Emails(), strings.ToLower(email)).Result()
	if isNil(err) || (err == nil && !social.IsID(id)) {
		return "", social.Errorf(social.NotFound, "no account has that address")
	}
	if err != nil {
		return "", fmt.Errorf("look up e-mail: %w", err)
	}
	return id, nil
}

// ClearMail removes everything of userID's account e-mails: its pending
// tokens and its address reservation (the account's deletion calls it).
func (s *MailService) ClearMail(ctx context.Context, userID string) error {
	if err := s.rdb.Del(ctx, s.keys.MailToken(userID, social.TokenVerify), s.keys.MailToken(userID, social.TokenReset)).Err(); err != nil {
		return fmt.Errorf("delete e-mail tokens of %s: %w", userID, err)
	}
	_, err := s.settle(ctx, userID, "", "expire", "any")
	return err
}

// SweepEmailReservations frees the addresses of reservations that
// expired before now (changes never confirmed), at most limit of them a
// call, and returns how many it freed.
func (s *MailService) SweepEmailReservations(ctx context.Context, now time.Time, limit int) (int, error) {
	freed := 0
	var cursor uint64
	for {
		kv, next, err := s.rdb.HScan(ctx, s.keys.EmailPending(), cursor, "", 256).Result()
		if err != nil {
			return freed, fmt.Errorf("scan e-mail reservations: %w", err)
		}
		for i := 0; i+1 < len(kv) && freed < limit; i += 2 {
			if !reservationExpired(kv[i+1], now) {
				continue
			}
			ok, err := s.settle(ctx, kv[i], "", "expire", strconv.FormatInt(now.UnixMilli(), 10))
			if err != nil {
				return freed, err
			}
			if ok {
				freed++
			}
		}
		if cursor = next; cursor == 0 || freed >= limit {
			return freed, nil
		}
	}
}

// reservationExpired reads an EmailPending entry ([address, expiry ms]).
func reservationExpired(v string, now time.Time) bool {
	var entry []any
	if json.Unmarshal([]byte(v), &entry) != nil || len(entry) != 2 {
		return false
	}
	x, ok := entry[1].(float64)
	return ok && int64(x) <= now.UnixMilli()
}
