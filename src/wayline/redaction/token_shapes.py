"""Token shapes: credentials a vendor marks with a literal prefix (or suffix), replaced whole.

Each shape is (name, literal prefix, the rest as a regex). The prefix, lowercased, gates the
rule (``SHAPE_TRIGGERS`` gives longer gates where the prefix alone is one or two letters);
the prefix must not be glued to a letter or digit before it. The formats are the vendors'
documented ones (prefix, alphabet and length), so a value of another length is no match.
"""

from __future__ import annotations

__all__ = ["SHAPE_TRIGGERS", "TOKEN_SHAPES"]

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])"

# Gemini (the exchange) API keys: "master-" or "account-" and 20 random alphanumerics.
_GEMINI_KEY = (
    r"(?=[A-Za-z]*[0-9])(?=[0-9a-z]*[A-Z])(?=[0-9A-Z]*[a-z])[0-9A-Za-z]{20}(?![A-Za-z0-9\-])"
)

# LaunchDarkly keys: a UUID's layout (8-4-4-4-12), in lower-case alphanumerics.
_LD_KEY = r"[0-9a-z]{8}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{12}(?![0-9A-Za-z\-])"

# Token shapes replace the whole token: (name, literal prefix, rest). The prefix, lowercased,
# is the trigger.
TOKEN_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("openai_style_key", "sk-", r"(?=[\w\-]*[0-9])[\w\-]{20,}"),  # also sk-ant-, sk-proj-, …
    ("stripe_secret_key", "sk_", r"(?:live|test)_[0-9A-Za-z]{10,}"),
    ("hex_secret_key", "sk_", r"[a-f0-9]{32,}(?![\w\-])"),  # also ElevenLabs-style keys
    ("stripe_restricted_key", "rk_", r"(?:live|test)_[0-9A-Za-z]{16,}"),
    ("stripe_webhook_secret", "whsec_", r"[A-Za-z0-9+/=]{24,}"),
    # Access key ids only; AIDA/AROA/… are public principal ids, not credentials.
    ("aws_access_key_id", "A", r"(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ("github_token", "gh", r"[pousr]_[A-Za-z0-9]{30,}"),
    ("github_fine_grained_pat", "github_pat_", r"[A-Za-z0-9_]{40,}"),
    # routable tokens end ".<2-char version>.<base36 check>" (glpat-<payload>.01.<crc>)
    (
        "gitlab_token",
        "gl",
        r"(?:pat|dt|ptt|rt|soat|cbt|imt|agent|oas|ft|ffct|wt|rtr)-[\w\-]{20,}"
        r"(?:\.[0-9A-Za-z]{2}\.[0-9a-z]{7,10}(?![\w.\-]))?",
    ),
    ("gitlab_runner_token", "GR1348941", r"[A-Za-z0-9_\-]{20,}"),
    ("slack_token", "xox", r"[abposre]-[A-Za-z0-9\-]{10,}"),
    ("sourcegraph_token", "sgp_", r"[A-Za-z0-9_]{40,}"),
    ("huggingface_org_token", "api_org_", r"[A-Za-z0-9]{30,}"),
    ("sonar_token", "sq", r"[pua]_[A-Za-z0-9]{40}"),
    ("onepassword_service_token", "ops_eyJ", r"[A-Za-z0-9+/=_\-]{60,}"),
    (
        "onepassword_secret_key",
        "A3-",
        r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}",
    ),
    ("flyio_token", "fm", r"[12]r?_[A-Za-z0-9+/=_\-]{60,}"),
    ("aws_bedrock_key", "ABSK", r"[A-Za-z0-9+/]{100,}={0,2}"),
    ("adobe_client_secret", "p8e-", r"[A-Za-z0-9]{32}"),
    ("intra42_secret", "s-s4t2", r"(?:ud|af)-[a-f0-9]{64}"),
    ("intra42_uid", "u-s4t2", r"(?:ud|af)-[a-f0-9]{64}"),
    ("supabase_token", "sb", r"(?:p|_secret|_publishable)_[A-Za-z0-9_\-]{30,}"),
    ("anthropic_admin_key", "sk-ant-admin01-", r"[\w\-]{80,}"),
    ("slack_app_token", "xapp-", r"[0-9]-[A-Za-z0-9\-]{10,}"),
    ("jwt", "eyJ", r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*)?"),
    ("google_api_key", "AIza", r"[0-9A-Za-z_\-]{35}"),
    ("google_oauth_client_secret", "GOCSPX-", r"[A-Za-z0-9_\-]{20,}"),
    ("google_oauth_access_token", "ya29.", r"(?=[\w\-]*[0-9])[0-9A-Za-z_\-]{10,}"),
    ("huggingface_token", "hf_", r"[A-Za-z0-9]{30,}"),
    ("npm_token", "npm_", r"[A-Za-z0-9]{30,}"),
    ("pypi_token", "pypi-", r"[A-Za-z0-9_\-]{50,}"),
    ("sendgrid_key", "SG.", r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    ("twilio_api_key", "SK", r"[0-9a-f]{32}(?![0-9a-zA-Z])"),
    # Mailgun private API keys: "key-" and 32 lower-case alphanumerics (hex in newer ones).
    ("mailgun_key", "key-", r"(?=[a-z]*[0-9])[0-9a-z]{32}(?![0-9a-zA-Z])"),
    ("digitalocean_token", "do", r"[por]_v1_[a-f0-9]{64}"),
    ("shopify_token", "shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("databricks_token", "dapi", r"(?:[a-f0-9]{32}|[A-F0-9]{32})(?:-[0-9])?"),
    ("telegram_bot_token", ":AA", r"(?<=[0-9]{8}:AA)[A-Za-z0-9_\-]{33}"),
    ("groq_key", "gsk_", r"[A-Za-z0-9]{40,}"),
    ("replicate_token", "r8_", r"[A-Za-z0-9]{30,}"),
    ("perplexity_key", "pplx-", r"[A-Za-z0-9]{40,}"),
    ("xai_key", "xai-", r"[A-Za-z0-9]{40,}"),
    ("nvidia_key", "nvapi-", r"[A-Za-z0-9_\-]{40,}"),
    ("langsmith_key", "lsv2_", r"(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    ("tavily_key", "tvly-", r"(?:dev-)?[A-Za-z0-9]{20,}"),
    ("notion_token", "ntn_", r"[A-Za-z0-9]{40,}"),
    ("notion_legacy_token", "secret_", r"[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
    ("linear_key", "lin_api_", r"[A-Za-z0-9]{40}"),
    ("atlassian_token", "ATATT3", r"[A-Za-z0-9_\-=]{50,}"),
    ("vault_token", "hv", r"[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("square_token", "sq0", r"(?:atp|csp)-[A-Za-z0-9_\-]{22,}"),
    ("postman_key", "PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}"),
    ("age_secret_key", "AGE-SECRET-KEY-1", r"[0-9A-Z]{58}"),
    ("sentry_token", "sntry", r"[su]_[A-Za-z0-9+/=_]{40,}"),
    ("grafana_service_token", "glsa_", r"[A-Za-z0-9]{32}_[a-f0-9]{8}"),
    ("grafana_cloud_token", "glc_", r"[A-Za-z0-9+/=]{32,}"),
    ("figma_token", "figd_", r"[A-Za-z0-9_\-]{40,}"),
    ("brevo_key", "x", r"(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9_\-]{16}"),
    # Pulumi access tokens: "pul-" and 40 lower-case alphanumerics (hex in practice).
    ("pulumi_token", "pul-", r"[a-z0-9]{40}(?![A-Za-z0-9])"),
    ("appsync_key", "da2-", r"[a-z0-9]{26}(?![A-Za-z0-9])"),
    ("newrelic_key", "NR", r"(?:AK|AA|II|JS|RA|IQ|SP|BR)-[A-Za-z0-9_\-]{19,42}(?![\w\-])"),
    ("typeform_token", "tfp_", r"[A-Za-z0-9_\-.]{40,80}"),
    ("buildkite_token", "bkua_", r"[A-Za-z0-9]{40}(?![A-Za-z0-9])"),
    ("slk_token", "slk_", r"[A-Za-z0-9]{30,}"),
    ("rootly_token", "rootly_", r"[a-f0-9]{64}(?![A-Za-z0-9])"),
    ("scrapfly_key", "scp-", r"(?:live|test)-[a-z0-9]{32}(?![A-Za-z0-9])"),
    ("doppler_token", "dp.", r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("easypost_key", "EZ", r"[AT]K[A-Za-z0-9]{40,60}(?![A-Za-z0-9])"),
    ("nightfall_key", "NF-", r"[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    ("pubnub_publish_key", "pub-c-", r"[0-9a-z]{8}(?:-[0-9a-z]{4}){3}-[0-9a-z]{12}(?![\w\-])"),
    ("pubnub_subscribe_key", "sub-c-", r"[0-9a-z]{8}(?:-[0-9a-z]{4}){3}-[0-9a-z]{12}(?![\w\-])"),
    ("pubnub_secret_key", "sec-c-", r"[A-Za-z0-9]{40,64}(?![A-Za-z0-9])"),
    ("square_access_token", "EAAA", r"[A-Za-z0-9_\-]{56,64}(?![\w\-])"),
    ("voiceflow_key", "VF.", r"(?:(?:DM|WS)\.)?[A-Za-z0-9]{24}\.[A-Za-z0-9]{16}(?![A-Za-z0-9])"),
    ("zoho_token", "1000.", r"[a-f0-9]{32}\.[a-f0-9]{32}(?![A-Za-z0-9])"),
    ("clojars_token", "CLOJARS_", r"[A-Za-z0-9]{60}(?![A-Za-z0-9])"),
    ("defined_networking_key", "dnkey-", r"[A-Z0-9]{26}-[A-Z0-9]{52}(?![A-Za-z0-9])"),
    ("docker_swarm_token", "SWMTKN-1-", r"[a-z0-9]{50}-[a-z0-9]{25}(?![A-Za-z0-9])"),
    ("heroku_token", "HRKU-", r"[A-Za-z0-9_\-]{30,80}(?![\w\-])"),
    ("postman_access_token", "PMAT-", r"[A-Za-z0-9]{26}(?![A-Za-z0-9])"),
    ("grafana_api_key", "eyJrIjoi", r"[A-Za-z0-9+/]{40,}={0,2}"),
    ("wundergraph_key", "cosmo_", r"[a-f0-9]{32}(?![A-Za-z0-9])"),
    ("tailscale_key", "tskey-", r"[a-z]{3,8}-[A-Za-z0-9]{4,40}-[A-Za-z0-9]{4,64}(?![A-Za-z0-9])"),
    ("readme_key", "rdme_", r"[a-z0-9]{64,80}(?![A-Za-z0-9])"),
    ("pagarme_key", "ak_", r"(?:live|test)_[A-Za-z0-9]{24,}"),
    ("ubidots_token", "BBFF-", r"[A-Za-z0-9]{30}(?![A-Za-z0-9])"),
    # Alibaba Cloud AccessKey ids start "LTAI" (ids of access keys are paired with their
    # secret, like AWS's AKIA: replaced too).
    ("alibaba_access_key_id", "LTAI", r"[A-Za-z0-9]{12,24}(?![A-Za-z0-9])"),
    # Tencent Cloud SecretIds and Scaleway access keys are the ids paired with a secret key
    # (like AWS's AKIA): replaced too.
    ("tencent_secret_id", "AKID", r"[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    ("scaleway_access_key", "SCW", r"[A-Z0-9]{17}(?![A-Za-z0-9])"),
    # Cloudflare's self-identifying tokens (2025): user and account API tokens (cfut_, cfat_)
    # and global API keys (cfk_): 40 alphanumerics and an 8-hex checksum.
    ("cloudflare_api_token", "cf", r"(?:ut|at|k)_[A-Za-z0-9]{40}[a-f0-9]{8}(?![A-Za-z0-9])"),
    ("cloudflare_origin_ca_key", "v1.0-", r"[a-f0-9]{24}-[a-f0-9]{146}(?![A-Za-z0-9])"),
    # LaunchDarkly: REST API access tokens, server-side SDK keys and mobile keys, each a
    # UUID's layout after its kind.
    ("launchdarkly_api_token", "api-", _LD_KEY),
    ("launchdarkly_sdk_key", "sdk-", _LD_KEY),
    ("launchdarkly_mobile_key", "mob-", _LD_KEY),
    # Atlassian: Bitbucket app passwords, Bitbucket Data Center HTTP access tokens, access
    # tokens of repositories, projects and workspaces.
    ("bitbucket_app_password", "ATBB", r"[A-Za-z0-9_=.\-]{24,}(?![\w=.\-])"),
    ("bitbucket_dc_token", "BBDC-", r"[A-Za-z0-9+/@_\-]{32,}"),
    ("atlassian_access_token", "ATCTT3", r"[A-Za-z0-9_\-=]{50,}"),
    # Google OAuth refresh tokens ("1//0" then the token, 40+ URL-safe characters).
    ("google_refresh_token", "1//0", r"[A-Za-z0-9_\-]{40,}"),
    # JFrog: API keys ("AKCp", 73 characters) and reference tokens (base64 of "reftkn:01:").
    ("artifactory_api_key", "AKCp", r"[A-Za-z0-9]{60,}"),
    ("artifactory_reference_token", "cmVmdGtuOjAxOj", r"[A-Za-z0-9+/]{40,}={0,2}"),
    ("netlify_token", "nfp_", r"[A-Za-z0-9_]{36,}"),
    # Microsoft Entra refresh tokens: "0.A" or "1.A", the token, ".Ag" and its long tail.
    ("entra_refresh_token_v0", "0.A", r"[\w\-]{50,}(?:\.[0-9])?\.Ag[\w\-*]{100,}"),
    ("entra_refresh_token_v1", "1.A", r"[\w\-]{50,}(?:\.[0-9])?\.Ag[\w\-*]{100,}"),
    ("yandex_api_key", "AQVN", r"[A-Za-z0-9_\-]{35,38}(?![\w\-])"),
    # More vendors' self-identifying formats (their documentation's prefix, alphabet, length).
    ("dynatrace_token", "dt0", r"[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])"),
    ("rubygems_key", "rubygems_", r"[A-Za-z0-9]{48}(?![A-Za-z0-9])"),
    ("braintree_token", "access_token$", r"(?:production|sandbox)\$[a-z0-9]{16}\$[a-z0-9]{32}"),
    # Amazon MWS auth tokens: "amzn.mws." and a UUID's layout.
    ("amazon_mws_token", "amzn.mws.", _LD_KEY),
    ("akamai_token", "akab-", r"[a-z0-9]{16}-[a-z0-9]{16}(?![A-Za-z0-9])"),
    ("contentful_token", "CFPAT-", r"[A-Za-z0-9_\-]{43}(?![\w\-])"),
    ("airtable_token", "pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])"),
    ("adafruit_key", "aio_", r"[A-Za-z0-9]{28}(?![A-Za-z0-9])"),
    ("dropbox_short_lived_token", "sl.", r"[A-Za-z0-9_\-]{130,}"),
    ("duffel_token", "duffel_", r"(?:test|live)_[A-Za-z0-9_\-=]{43}"),
    ("flutterwave_key", "FLWSECK", r"(?:_TEST)?-[a-z0-9]{32}-X"),
    # More self-identifying formats, as the scanners' rules give them (trufflehog's detector
    # regexes, read as grammar): Bannerbear, Endor Labs, Finage, Gemini (the exchange),
    # Klaviyo private keys, Robinhood Crypto, SonarCloud.
    ("bannerbear_key", "bb_", r"(?:pr|ma)_[a-f0-9]{30}(?![A-Za-z0-9])"),
    ("endorlabs_key", "endr+", r"[A-Za-z0-9\-]{16}(?![A-Za-z0-9\-])"),
    ("finage_key", "API_KEY", r"(?=[A-Z]*[0-9])[0-9A-Z]{32}(?![A-Za-z0-9])"),
    ("gemini_master_key", "master-", _GEMINI_KEY),
    ("gemini_account_key", "account-", _GEMINI_KEY),
    ("klaviyo_private_key", "pk_", r"(?:[A-Za-z0-9]{6}_)?[0-9a-f]{34}(?![A-Za-z0-9])"),
    ("robinhood_crypto_key", "rh-api-", r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"),
    # Ramp's client ids and secrets (an id paired with its secret, like AWS's AKIA).
    ("ramp_client_id", "ramp_id_", r"[A-Za-z0-9]{40}(?![A-Za-z0-9])"),
    ("ramp_client_secret", "ramp_sec_", r"[A-Za-z0-9]{48}(?![A-Za-z0-9])"),
    ("sonarcloud_token", "sqco_", r"[A-Za-z0-9]{59}(?![A-Za-z0-9])"),
    # From Kingfisher's rule patterns: CircleCI personal tokens, ClickUp personal tokens,
    # crates.io tokens, StackHawk API keys, Slack configuration (refresh) tokens.
    ("circleci_pat", "CCIPAT_", r"[A-Za-z0-9]{20,30}_[A-Za-z0-9]{40}(?![A-Za-z0-9])"),
    ("clickup_token", "pk_", r"[0-9]{7,8}_[0-9A-Z]{32}(?![A-Za-z0-9])"),
    (
        "cratesio_token",
        "cio",
        r"(?=[a-z]*[A-Z])(?=[A-Z]*[a-z])(?=[A-Za-z]*[0-9])[A-Za-z0-9]{32}(?![A-Za-z0-9])",
    ),
    ("stackhawk_key", "hawk.", r"[0-9A-Za-z_\-]{20}\.[0-9A-Za-z_\-]{20}(?![\w\-])"),
    ("slack_config_token", "xoxe", r"(?:\.xox[bparose])?-[0-9]-[A-Za-z0-9]{140,170}"),
    ("frameio_token", "fio-u-", r"[A-Za-z0-9_=\-]{64}"),
    ("harness_pat", "pat.", r"[A-Za-z0-9_\-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}(?![A-Za-z0-9])"),
    ("hubspot_pat", "pat-", r"(?:na|eu)1-" + _UUID),
    ("infracost_key", "ico-", r"[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    ("nuget_key", "oy2", r"[a-z0-9]{43}(?![A-Za-z0-9])"),
    ("plaid_token", "access-", r"(?:sandbox|development|production)-" + _UUID),
    ("planetscale_token", "pscale_", r"(?:tkn|oauth|pw)_[A-Za-z0-9_.\-]{32,64}"),
    ("prefect_key", "pnu_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("scalingo_token", "tk-us-", r"[A-Za-z0-9_\-]{48}"),
    ("shippo_token", "shippo_", r"(?:live|test)_[a-f0-9]{40}"),
    ("render_key", "rnd_", r"[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    ("neon_key", "napi_", r"[a-z0-9]{64}(?![A-Za-z0-9])"),
    ("pinecone_key", "pcsk_", r"[A-Za-z0-9_]{50,}"),
    # Beamer API keys: "b_" and 44 URL-safe base64 characters (mixed case: a snake_case name
    # after "b_" is code).
    (
        "beamer_key",
        "b_",
        r"(?=(?:[A-Za-z0-9=\-]*?[A-Z]){2})(?=[A-Za-z0-9=\-]*?[a-z])[A-Za-z0-9=\-]{44}(?![\w=\-])",
    ),
    # Salesforce session ids and access tokens: the org id ("00D", 15 or 18), "!", the token.
    ("salesforce_token", "00D", r"[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,}"),
)


# Shapes whose literal prefix is too short to gate on (one or two letters occur in most
# text): gate on the full distinctive prefixes instead.
SHAPE_TRIGGERS: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("akia", "asia", "abia", "acca"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "gitlab_token": (
        "glpat-",
        "gldt-",
        "glptt-",
        "glrt-",
        "glsoat-",
        "glcbt-",
        "glimt-",
        "glagent-",
        "gloas-",
        "glft-",
        "glffct-",
        "glwt-",
        "glrtr-",
    ),
    "sonar_token": ("sqp_", "squ_", "sqa_"),
    "flyio_token": ("fm1_", "fm2_", "fm1r_", "fm2r_"),
    "supabase_token": ("sbp_", "sb_secret_", "sb_publishable_"),
    "digitalocean_token": ("dop_v1_", "doo_v1_", "dor_v1_"),
    "vault_token": ("hvs.", "hvb.", "hvr."),
    "brevo_key": ("xkeysib-", "xsmtpsib-"),
    "newrelic_key": ("nrak-", "nraa-", "nrii-", "nrjs-", "nrra-", "nriq-", "nrsp-", "nrbr-"),
    "easypost_key": ("ezak", "eztk"),
    "cloudflare_api_token": ("cfut_", "cfat_", "cfk_"),
    "bannerbear_key": ("bb_pr_", "bb_ma_"),
}
