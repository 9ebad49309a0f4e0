"""The two defaults of a live scrape, in a module of their own so that the options and the
node facts' Context can name them without loading the HTTP client (``netfetch``, with its
sockets and threads): a ``check`` that scrapes nothing must not pay for it (start-up)."""

DEFAULT_DEADLINE_S = 10.0  # each answer's deadline: --timeout (alias --scrape-timeout) of check and probe
# seconds between a scrape's two samples: above dcgm-exporter's default 30 s collect interval
# (validator/facts/node/scrape.py says where that is read), so a healthy exporter never serves
# the same sample twice. The one default of --scrape-interval (check, probe, cluster) and the
# node facts' Context.
SCRAPE_INTERVAL_S = 35.0
