"""The stages a command runs, below the jobs and above the engine: a score run prepared (the pool's
counting pass, the checks and warnings, the run's identity: ``score.prepare``), fitted and scored for one
target or several in one pass (``score.score_prepared`` over :mod:`domainsift.engine`), chosen from
(``choose``: the rule, ``--dedup``, ``--exclude``, ``auto``), mixed across targets (``mix``), combined
(``combine``); what a run will cost (``plan``); the encoders' passes (``embed``, ``cluster``). The jobs
(:mod:`domainsift.jobs`) are one thin module per command over these; a job never calls another job.
"""
