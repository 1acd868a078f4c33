package tracing

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// RedisHook makes a span for each Redis flight (a command, or a pipeline
// with its commands' count and names) made inside a traced operation.
// Work outside one (the fan-out worker, pub/sub, probes) and unsampled
// requests pass through at the cost of one context lookup: go-redis's
// redisotel hook would start a root span for every background command and
// format every pipeline's summary whether sampled or not. Arguments are
// never recorded: they hold tokens' hashes and users' text.
type RedisHook struct{ tracer trace.Tracer }

// NewRedisHook returns the hook, making spans with tp.
func NewRedisHook(tp trace.TracerProvider) RedisHook { return RedisHook{tracer: tp.Tracer(Name)} }

var _ redis.Hook = RedisHook{}

func (RedisHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h RedisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !trace.SpanFromContext(ctx).IsRecording() || handshake(cmd) {
			return next(ctx, cmd)
		}
		ctx, span := h.start(ctx, "redis "+cmd.Name(), 1)
		defer span.End()
		return record(span, next(ctx, cmd))
	}
}

func (h RedisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !trace.SpanFromContext(ctx).IsRecording() || allHandshake(cmds) {
			return next(ctx, cmds)
		}
		ctx, span := h.start(ctx, "redis pipeline", len(cmds))
		defer span.End()
		names := make([]string, 0, len(cmds))
		for _, c := range cmds {
			if len(names) == 0 || names[len(names)-1] != c.Name() {
				names = append(names, c.Name())
			}
		}
		span.SetAttributes(attribute.StringSlice("db.operation.names", names))
		return record(span, next(ctx, cmds))
	}
}

func (h RedisHook) start(ctx context.Context, name string, n int) (context.Context, trace.Span) {
	return h.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("db.system.name", "redis"),
		attribute.Int("db.operation.batch.size", n),
	))
}

// handshake reports a command go-redis sends on a new connection before
// the first command it carries (HELLO, AUTH, SELECT, READONLY, CLIENT
// SETNAME, SETINFO and MAINT_NOTIFICATIONS): dialing, not the operation's
// work. A server may refuse some of it harmlessly (Redis 7.0 has no CLIENT
// SETINFO nor MAINT_NOTIFICATIONS),
// and a span of it would mark a healthy request's trace failed.
func handshake(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "auth", "select", "readonly":
		return true
	case "client":
		args := cmd.Args()
		sub, _ := args[min(1, len(args)-1)].(string)
		switch strings.ToLower(sub) {
		case "setinfo", "setname", "maint_notifications":
			return true
		}
	}
	return false
}

// allHandshake reports a pipeline of handshake commands only.
func allHandshake(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if !handshake(c) {
			return false
		}
	}
	return len(cmds) > 0
}

// record marks the span failed on an error other than redis.Nil (a
// missing key is an answer).
func record(span trace.Span, err error) error {
	if err != nil && !errors.Is(err, redis.Nil) {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

// Instrument adds the hook to rdb. A cluster client runs it once per
// flight, before the flight is split by node.
func Instrument(rdb redis.UniversalClient, tp trace.TracerProvider) {
	rdb.AddHook(NewRedisHook(tp))
}
