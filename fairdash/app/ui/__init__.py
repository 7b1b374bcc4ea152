"""What the pages share, by topic: user text and errors (``text``), the pages and the router (``navigation``), an
uploaded table (``upload``), the session's table, task and target (``workspace``), and what a training needs from the
server (``training``). Pages import the topic they use; there is no facade here."""
