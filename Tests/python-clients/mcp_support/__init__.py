"""Helpers of test_oidc_mcp.py: an MCP resource server that accepts Trifactor's access tokens,
and Chromium driving Trifactor's hosted sign-in for the MCP SDK's OAuth client."""
