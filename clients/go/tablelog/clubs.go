package tablelog

import (
	"context"
	"time"

	tablelogv1 "github.com/tablelog/tablelog/clients/go/gen/tablelog/v1"
)

// WhoAmI says who the client's token names: the member, their club, and a link token's game.
func (c *Client) WhoAmI(ctx context.Context) (*tablelogv1.WhoAmIResponse, error) {
	return unary(c, ctx, c.Clubs.WhoAmI, &tablelogv1.WhoAmIRequest{})
}

// Members lists the members of the caller's club.
func (c *Client) Members(ctx context.Context) ([]*tablelogv1.Member, error) {
	resp, err := unary(c, ctx, c.Clubs.ListMembers, &tablelogv1.ListMembersRequest{})
	return resp.GetMembers(), err
}

// AddMember adds a member with a role to the caller's club (owners only).
func (c *Client) AddMember(ctx context.Context, displayName string, role tablelogv1.Role) (*tablelogv1.Member, error) {
	resp, err := unary(c, ctx, c.Clubs.AddMember, &tablelogv1.AddMemberRequest{DisplayName: displayName, Role: role})
	return resp.GetMember(), err
}

// RemoveMember removes a member and revokes their tokens; it returns how many were revoked.
func (c *Client) RemoveMember(ctx context.Context, memberID string) (uint32, error) {
	resp, err := unary(c, ctx, c.Clubs.RemoveMember, &tablelogv1.RemoveMemberRequest{MemberId: memberID})
	return resp.GetTokensRevoked(), err
}

// SetRole changes a member's role.
func (c *Client) SetRole(ctx context.Context, memberID string, role tablelogv1.Role) (*tablelogv1.Member, error) {
	resp, err := unary(c, ctx, c.Clubs.SetRole, &tablelogv1.SetRoleRequest{MemberId: memberID, Role: role})
	return resp.GetMember(), err
}

// CreateToken creates a bearer token for a member ("": the caller), answered only here.
// expiresIn 0 is the server's default; it is sent in whole seconds.
func (c *Client) CreateToken(ctx context.Context, memberID string, expiresIn time.Duration) (*tablelogv1.CreateTokenResponse, error) {
	return unary(c, ctx, c.Clubs.CreateToken, &tablelogv1.CreateTokenRequest{
		MemberId: memberID, ExpiresInSeconds: uint32(expiresIn / time.Second),
	})
}

// Tokens lists the club's tokens (memberID "": every member's), never the tokens themselves.
func (c *Client) Tokens(ctx context.Context, memberID string) ([]*tablelogv1.TokenInfo, error) {
	resp, err := unary(c, ctx, c.Clubs.ListTokens, &tablelogv1.ListTokensRequest{MemberId: memberID})
	return resp.GetTokens(), err
}

// RevokeToken revokes a token by its id.
func (c *Client) RevokeToken(ctx context.Context, tokenID string) (*tablelogv1.TokenInfo, error) {
	resp, err := unary(c, ctx, c.Clubs.RevokeToken, &tablelogv1.RevokeTokenRequest{TokenId: tokenID})
	return resp.GetToken(), err
}
