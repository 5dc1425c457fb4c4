"""Debugging a run. In the simulation: the TLP trace (:mod:`.trace`), the waveform's text
tracks (:mod:`.annotate`), attached to each TB by the plugin the runner names
(:mod:`.plugin`), and the hard IP's beats (:mod:`.beats`). After it, from the files it
left (plain Python, for the flow): the records and their labels (:mod:`.records`), the
transfer report (:mod:`.report`), the Perfetto timeline (:mod:`.perfetto`), FST reading
(:mod:`.fst`) and GTKWave save files (:mod:`.gtkwave`).
"""
