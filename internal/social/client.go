package social

import "context"

type clientIPKey struct{}

// WithClientIP returns a context carrying the address the request came
// from (as the HTTP edge determined it, proxies taken into account), which
// per-address rate limits are keyed by.
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

// ClientIP returns the request's client address, or "" outside a request.
func ClientIP(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey{}).(string)
	return ip
}
