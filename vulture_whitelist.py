"""Names vulture reports at 80% confidence that FairDash keeps, each with its reason (read by vulture, never
imported). The dead-code check, from the repository root:

    vulture fairdash app.py pages benchmarks vulture_whitelist.py --min-confidence 80
"""
# fairdash/app/ui/workspace.py, _leaks_and_proxies: st.cache_data hashes its arguments to key the cache;
# ``task_key`` (the table and the task's spec) is that key, since the underscored ``_df`` and ``_task`` are not hashed.
task_key
