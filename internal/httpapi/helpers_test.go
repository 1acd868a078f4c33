package httpapi_test

import (
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// Documents and variables these tests send.
const (
	authPayloadFields = `accessToken refreshToken expiresAt user { id name email }`
	authRegisterDoc   = `mutation($i: RegisterInput!) { register(input: $i) { ` + authPayloadFields + ` } }`
	authLoginDoc      = `mutation($i: LoginInput!) { login(input: $i) { ` + authPayloadFields + ` } }`
	authLogoutDoc     = `mutation { logout }`
	authMeDoc         = `{ me { id name email } }`
	jsonType          = "application/json"
	engCreatePostDoc  = `mutation($i: CreatePostInput!) { createPost(input: $i) { id } }`
)

func registerVars(name, email, password string) map[string]any {
	return map[string]any{"i": map[string]any{"name": name, "email": email, "password": password}}
}

func loginVars(login, password string) map[string]any {
	return map[string]any{"i": map[string]any{"login": login, "password": password}}
}

func wantCode(t *testing.T, r *gatewaytest.Response, code string) {
	t.Helper()
	r.WantCode(t, code)
}
