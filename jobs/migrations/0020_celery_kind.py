"""Celery tasks as a kind of job (executor "celery", jobs/kinds.py): the choices and the
check constraint of Job.executor gain it."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0018_unused_schedule_fields'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='job',
            name='jobs_job_known_executor',
        ),
        migrations.AlterField(
            model_name='job',
            name='executor',
            field=models.CharField(choices=[('simulated', 'Simulated'), ('python', 'Python task'), ('command', 'Management command'), ('shell', 'Shell command'), ('http', 'HTTP request'), ('celery', 'Celery task')], db_default='simulated', default='simulated', help_text='What a run does: simulate, call a Python task, run a command or a request.', max_length=16, verbose_name='executor'),
        ),
        migrations.AddConstraint(
            model_name='job',
            constraint=models.CheckConstraint(condition=models.Q(('executor', 'simulated'), ('executor', 'python'), ('executor', 'command'), ('executor', 'shell'), ('executor', 'http'), ('executor', 'celery'), _connector='OR'), name='jobs_job_known_executor'),
        ),
    ]
