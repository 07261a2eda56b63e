"""A user's ASA job in, the corrected job out (``--job-definition``, ``--write-fix``).

* :mod:`.definition` reads the three shapes (ARM template, resource JSON, ``az ... job show``);
* :mod:`.tokens` and :mod:`.query` read the query's ``TIMESTAMP BY`` / ``OVER`` /
  ``PARTITION BY`` per input; :mod:`.job` turns both into an ``OrderingPolicy``;
* :mod:`.plan` picks the corrected policy from the findings (measured on a capture);
  :mod:`.rewrite` edits the query in place; :mod:`.fix` writes the corrected files.
"""

from diagnostics.jobdef.definition import JobDefinition, JobInput, Shape, read_job_definition
from diagnostics.jobdef.job import JobPolicy, job_policy

__all__ = ["JobDefinition", "JobInput", "JobPolicy", "Shape", "job_policy", "read_job_definition"]
