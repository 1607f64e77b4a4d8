/** The jobs' part of history tables: their checks before anything is written, apply and line. */
package org.lakecdc.pipelines.history;
