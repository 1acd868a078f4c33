// Package clientaddr carries the address a request came from, as the HTTP
// edge determined it (proxies taken into account), to the per-address
// rate limits wherever the operation runs.
package clientaddr

import "context"

type clientIPKey struct{}

// WithClientIP returns a context carrying the address the request came
// from (as the HTTP edge determined it, proxies taken into account), which
// per-address rate limits are keyed by.
func With(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

// ClientIP returns the request's client address, or "" outside a request.
func From(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey{}).(string)
	return ip
}
